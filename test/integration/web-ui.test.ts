import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { type Page, chromium } from 'playwright-core';
import { BLOB_ENCODING } from '../../src/worker/large-payload-codec';
import { isListening } from '../../src/platform/free-port';
import { assertCliBuilt, runCli, startCli } from '../support/cli-process';
import { inCi } from '../support/in-ci';
import { startScriptedModelServer } from '../support/scripted-model-server';
import { waitFor } from '../support/test-worker';
import { unclaimedPorts } from '../support/unclaimed-port';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const chromiumMissing = existsSync(CHROMIUM)
  ? undefined
  : `the Web UI test needs Chromium at ${CHROMIUM} (Debian: apt-get install chromium, which .ci/run does; or set CHROMIUM_PATH)`;
// In CI a missing browser fails the run; on a developer's machine the test is skipped, saying why.
if (chromiumMissing && !inCi()) console.warn(`skipped: ${chromiumMissing}`);
const whenBrowser = chromiumMissing && !inCi() ? test.skip : test;

beforeAll(() => {
  assertCliBuilt();
  if (chromiumMissing && inCi()) throw new Error(chromiumMissing);
});

whenBrowser(
  'the Web UI of the embedded server shows each activity and local tool by its summary and, through the codec server, a large payload decoded',
  async () => {
    const workspace = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-ui-ws-'));
    const lines = ['MARKER-BEGIN of the big file'];
    // Hashes do not compress: the result stays large after gzip and goes to the blob store.
    for (let i = 0; i < 600; i++)
      lines.push(`line ${i}: ${createHash('sha256').update(String(i)).digest('hex')}`);
    await writeFile(path.join(workspace, 'big.txt'), lines.join('\n'));
    const model = await startScriptedModelServer([
      { toolCalls: [{ id: 'call_big', name: 'read', arguments: { path: 'big.txt' } }] },
      { text: 'It is a big file.' },
    ]);
    const [serverPort, uiPort, codecPort] = await unclaimedPorts(3);
    const ports = { server: serverPort!, ui: uiPort!, codec: codecPort! };
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-ui-data-'));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DURABLE_AGENT_DATA_DIR: dataDir,
      DURABLE_AGENT_SERVER_PORT: String(ports.server),
      DURABLE_AGENT_UI_PORT: String(ports.ui),
      DURABLE_AGENT_CODEC_PORT: String(ports.codec),
      DURABLE_AGENT_OFFLOAD_ABOVE_BYTES: '1024',
      OPENAI_BASE_URL: model.baseUrl,
      AGENT_MODEL: 'scripted-model',
    };
    delete env.TEMPORAL_ADDRESS;
    const server = startCli(['server'], env);
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    try {
      await server.stderrMatching(/ready/);
      const ran = await runCli(
        ['run', '--workspace', workspace, '--id', 'ui-conv', 'Read big.txt please'],
        env,
      );
      expect(ran).toMatchObject({ code: 0, stdout: 'It is a big file.\n' });

      // A finished conversation: its run answered, then it was ended (a worker takes the end).
      const worker = startCli(['worker', '--workspace', workspace], env);
      await worker.stderrMatching(/worker on task queue/);
      expect(await runCli(['end', 'ui-conv'], env)).toMatchObject({ code: 0 });

      // Without the codec, history holds the tool's result only as a blob reference.
      const connection = await Connection.connect({ address: `127.0.0.1:${ports.server}` });
      try {
        const handle = new Client({ connection }).workflow.getHandle('ui-conv');
        await handle.result();
        const history = await handle.fetchHistory();
        // `read` runs as a local activity: its result is in its marker, as a blob reference.
        const readMarker = (history.events ?? []).find(
          (event) =>
            event.markerRecordedEventAttributes?.markerName === 'core_local_activity' &&
            event.userMetadata?.summary?.data?.toString().includes('read big.txt'),
        );
        const result = readMarker?.markerRecordedEventAttributes?.details?.result?.payloads?.[0];
        expect(Buffer.from(result?.metadata?.encoding ?? '').toString()).toBe(BLOB_ENCODING);
      } finally {
        await connection.close();
      }

      await waitFor(
        async () => ((await isListening('127.0.0.1', ports.codec)) ? true : undefined),
        'the codec server',
      );
      const page = await browser.newPage();
      await page.goto(`http://127.0.0.1:${ports.ui}/namespaces/default/workflows/ui-conv`);
      // Activities appear by their summaries, not as callModel (on the timeline the workflow page
      // opens with); this Web UI names a local activity there by its type only.
      await page.getByText('Completed').first().waitFor();
      await textInPage(page, 'model (worker default): run 1, turn 2');
      // The local read, opened from the timeline: its marker in the event history, with its summary
      // and its result, read back from the blob store by the codec server the UI asks.
      await page.getByText('runLocalTool', { exact: true }).filter({ visible: true }).first().click();
      await textInPage(page, 'read big.txt');
      await page
        .getByText('MARKER-BEGIN of the big f', { exact: false })
        .first()
        .waitFor({ timeout: 30_000 });
    } finally {
      await browser.close();
      server.kill('SIGTERM');
      await server.done;
      await model.close();
    }
  },
  180_000,
);

/**
 * Waits until `text` shows in the page or in a frame of it: the Web UI renders summaries (which are
 * markdown) each in a sandboxed frame of its own.
 */
async function textInPage(page: Page, text: string): Promise<void> {
  await waitFor(
    async () => {
      for (const frame of page.frames()) {
        if ((await frame.innerText('body').catch(() => '')).includes(text)) return true;
      }
      return undefined;
    },
    `"${text}" in the Web UI`,
    30_000,
    250,
  );
}
