import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@temporalio/client';
import { connectionSettingsFromEnv } from '../../shared/connection-settings';
import { assertConversationId } from '../../shared/ids';
import { AgentClient } from '../agent-client';
import { renderProgress } from '../render-progress';
import { type Cleanups, log } from './cleanups';
import { ensureServer, startLocalWorker } from './local-services';
import { UsageError } from './usage-error';

const NO_WORKER_HINT_AFTER_MS = 15_000;

/** `run`: send a prompt, show progress, print the answer. Exit 0 answered, 1 no answer, 2 not configured. */
export async function runCommand(args: string[], cleanups: Cleanups): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      id: { type: 'string' },
      workspace: { type: 'string' },
      json: { type: 'boolean', default: false },
      'no-worker': { type: 'boolean', default: false },
      model: { type: 'string' },
      system: { type: 'string' },
      'max-tool-iterations': { type: 'string' },
    },
  });
  const prompt = positionals.join(' ').trim();
  if (!prompt) throw new UsageError('run needs a prompt');
  const conversationId = assertConversationId(values.id ?? `conv-${randomUUID()}`);
  const workspace = path.resolve(values.workspace ?? process.cwd());
  const maxToolIterations = positiveInteger(values['max-tool-iterations'], '--max-tool-iterations');

  const { modelSettingsFromEnv, MODEL_SETUP_HELP } = await import('../../worker/model-settings');
  if (!values['no-worker'] && !modelSettingsFromEnv(process.env)) {
    log(MODEL_SETUP_HELP);
    return 2;
  }

  const settings = connectionSettingsFromEnv(process.env);
  const address = await ensureServer(settings, cleanups);
  const { connectClient } = await import('../../worker/connect');
  const connection = await connectClient(settings, address);
  cleanups.last(() => connection.close());
  if (!values['no-worker']) await startLocalWorker(settings, address, workspace, cleanups);

  const agent = new AgentClient(
    new Client({ connection, namespace: settings.namespace }),
    settings.taskQueue,
  );
  const sent = await agent.send(conversationId, prompt, {
    options: { workspace, model: values.model, systemPrompt: values.system, maxToolIterations },
  });
  if (!values.json) log(`conversation ${conversationId}`);
  const follow = agent.follow(sent);
  const noWorkerHint = setTimeout(
    () =>
      log(
        `Nothing has picked up the conversation yet: is a worker running on task queue ${settings.taskQueue}?`,
      ),
    NO_WORKER_HINT_AFTER_MS,
  );
  for (;;) {
    const next = await follow.next();
    clearTimeout(noWorkerHint);
    if (next.done) {
      const finished = next.value;
      if (values.json) return finished.outcome === 'answered' ? 0 : 1;
      if (finished.outcome !== 'answered') {
        log(`run ended without an answer (${finished.outcome}); see the error above`);
        return 1;
      }
      process.stdout.write(`${finished.answer}\n`);
      return 0;
    }
    if (values.json) {
      const item = next.value;
      process.stdout.write(
        `${JSON.stringify(item.kind === 'event' ? item.event : { type: 'progress', ...item.progress })}\n`,
      );
    } else {
      const line = renderProgress(next.value);
      if (line) log(line);
    }
  }
}

function positiveInteger(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1)
    throw new UsageError(`${flag} takes a whole number of at least 1, got ${value}`);
  return number;
}
