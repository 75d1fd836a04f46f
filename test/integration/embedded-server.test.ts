import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { startEmbeddedServer } from '../../src/temporal-server/ensure-server';
import { unclaimedPorts } from '../support/unclaimed-port';

test('an embedded server started while the previous one on the same data file is stopping waits for it, then starts', async () => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-embedded-'));
  const [port, uiPort, codecPort] = await unclaimedPorts(3);
  const settings = {
    port: port!,
    uiPort: uiPort!,
    codecPort: codecPort!,
    dbFile: path.join(dataDir, 'temporal.db'),
  };
  const lines: string[] = [];
  const log = (line: string) => lines.push(line);
  const first = await startEmbeddedServer(settings, 'default', log);
  const stopping = first.stop();

  const second = await startEmbeddedServer(settings, 'default', log);
  try {
    await stopping;
    const connection = await Connection.connect({ address: second.address });
    try {
      await connection.workflowService.describeNamespace({ namespace: 'default' });
    } finally {
      await connection.close();
    }
    expect(lines.some((line) => line.startsWith('Waiting for the Temporal server still holding'))).toBe(true);
  } finally {
    await second.stop();
  }
}, 120_000);
