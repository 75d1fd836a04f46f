import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { ConversationOptionsInput } from '../../shared/conversation-options';
import { webUiLink } from '../terminal/web-ui-link';
import { type Cleanups, log } from '../cleanups';
import { connectAgent } from '../connect-agent';
import { CONVERSATION_OPTION_FLAGS, conversationOptionsFromFlags } from '../conversation-flags';
import { followRun, reportRunEnd } from '../terminal/follow-run';
import { noModelConfigured, startLocalWorker } from '../local-services';
import { conversationIdArg, parseCommandArgs } from '../parse-command-args';
import { UsageError } from '../usage-error';

const NO_WORKER_HINT_AFTER_MS = 15_000;

export interface RunArgs {
  conversationId: string;
  prompt: string;
  workspace: string;
  json: boolean;
  startWorker: boolean;
  options: ConversationOptionsInput;
  /** Who sends the prompt (checked against the conversation's `owners`). */
  sender?: string;
}

export function parseRunArgs(args: string[], cwd = process.cwd()): RunArgs {
  const { values, positionals } = parseCommandArgs('run', {
    args,
    allowPositionals: true,
    options: {
      ...CONVERSATION_OPTION_FLAGS,
      id: { type: 'string' },
      json: { type: 'boolean', default: false },
      'no-worker': { type: 'boolean', default: false },
      sender: { type: 'string' },
    },
  });
  const prompt = positionals.join(' ').trim();
  if (!prompt) throw new UsageError('run needs a prompt');
  const workspace = path.resolve(cwd, values.workspace ?? '.');
  return {
    conversationId: conversationIdArg(values.id ?? `conv-${randomUUID()}`),
    prompt,
    workspace,
    json: values.json,
    startWorker: !values['no-worker'],
    options: { ...conversationOptionsFromFlags(values), workspace },
    ...(values.sender !== undefined ? { sender: values.sender } : {}),
  };
}

/** `run`: send a prompt, show progress, print the answer. Exit 0 answered, 1 no answer, 2 not configured. */
export async function runCommand(args: string[], cleanups: Cleanups): Promise<number> {
  const run = parseRunArgs(args);
  if (run.startWorker && (await noModelConfigured())) return 2;

  const { agent, settings, address } = await connectAgent(cleanups, { startServer: true });
  if (run.startWorker) await startLocalWorker({ settings, address, workspace: run.workspace }, cleanups);

  const sent = await agent.send(run.conversationId, run.prompt, { options: run.options, sender: run.sender });
  if (!run.json) {
    const link = webUiLink(settings, run.conversationId);
    log(`conversation ${run.conversationId}${link ? ` (${link})` : ''}`);
  }
  const finished = await followRun({
    agent,
    run: sent,
    json: run.json,
    quietHint: {
      afterMs: NO_WORKER_HINT_AFTER_MS,
      text: `Nothing has picked up the conversation yet: is a worker running on task queue ${settings.taskQueue}?`,
    },
  });
  return reportRunEnd(run.conversationId, finished, run.json);
}
