import { randomUUID } from 'node:crypto';
import { RemoteTaskTimeoutError } from '../../a2a-remote/follow-remote-task';
import { inertText } from '../../a2a-remote/inert-text';
import { RemoteAgentClient } from '../../a2a-remote/remote-agent-client';
import { callRemoteAgent } from '../../a2a-remote/remote-call';
import { type RemoteCard, fetchRemoteCard } from '../../a2a-remote/remote-card';
import { answerOfTask, statusText, textOfParts } from '../../a2a-remote/remote-task-text';
import { type Cleanups, log } from '../cleanups';
import { namedPositionals, parseCommandArgs, positiveInteger } from '../parse-command-args';
import { UsageError } from '../usage-error';

/** The most of an answer printed. */
const MAX_ANSWER_BYTES = 1024 * 1024;
const DEFAULT_TIMEOUT_SECONDS = 600;

export type A2AArgs =
  | { action: 'card'; cardUrl: string; token?: string; json: boolean }
  | {
      action: 'send';
      cardUrl: string;
      text: string;
      token?: string;
      taskId?: string;
      timeoutMs: number;
      json: boolean;
    };

/**
 * `a2a card URL` and `a2a send URL "text"`. URL is the card's, or the agent's origin (the card is then
 * its `/.well-known/agent-card.json`); the bearer token is `--token` or DURABLE_AGENT_A2A_TOKEN.
 */
export function parseA2AArgs(args: string[], env: NodeJS.ProcessEnv): A2AArgs {
  const { values, positionals } = parseCommandArgs('a2a', {
    args,
    allowPositionals: true,
    options: {
      token: { type: 'string' },
      'task-id': { type: 'string' },
      timeout: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const action = positionals[0];
  const token = values.token ?? (env.DURABLE_AGENT_A2A_TOKEN || undefined);
  const common = { ...(token ? { token } : {}), json: values.json };
  if (action === 'card') {
    if (values['task-id'] !== undefined || values.timeout !== undefined)
      throw new UsageError('a2a: --task-id and --timeout are for send');
    const { URL: url } = namedPositionals('a2a card', positionals.slice(1), ['URL'] as const);
    return { action, cardUrl: cardUrlOf(url), ...common };
  }
  if (action === 'send') {
    const { URL: url, TEXT: text } = namedPositionals('a2a send', positionals.slice(1), [
      'URL',
      'TEXT',
    ] as const);
    if (text.trim() === '') throw new UsageError('a2a send needs some text to send');
    const seconds = positiveInteger(values.timeout, '--timeout') ?? DEFAULT_TIMEOUT_SECONDS;
    return {
      action,
      cardUrl: cardUrlOf(url),
      text,
      ...(values['task-id'] !== undefined ? { taskId: values['task-id'] } : {}),
      timeoutMs: seconds * 1_000,
      ...common,
    };
  }
  throw new UsageError(`a2a takes card or send, not ${JSON.stringify(action ?? '')}`);
}

/** The card's URL: as given, or the well-known one under an origin given alone. */
function cardUrlOf(given: string): string {
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw new UsageError(`a2a: not a URL: ${given}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`a2a: not an http or https URL: ${given}`);
  if (url.pathname === '/' && !url.search) return `${url.origin}/.well-known/agent-card.json`;
  return url.href;
}

/**
 * `a2a card|send`: tries a remote A2A agent as a worker would call it (the same card checks, the
 * same client), printing only printable text of bounded length, whatever the remote wrote.
 */
export async function a2aCommand(args: string[], _cleanups: Cleanups): Promise<number> {
  const parsed = parseA2AArgs(args, process.env);
  const card = await fetchRemoteCard(parsed.cardUrl, parsed.token ? { token: parsed.token } : {});
  if (parsed.action === 'card') {
    process.stdout.write(parsed.json ? `${JSON.stringify(card)}\n` : cardLines(card));
    return 0;
  }
  const client = new RemoteAgentClient(card.endpoint, parsed.token ? { token: parsed.token } : {});
  const outcome = await callRemoteAgent(
    client,
    { messageId: randomUUID(), text: parsed.text, ...(parsed.taskId ? { taskId: parsed.taskId } : {}) },
    {
      deadline: Date.now() + parsed.timeoutMs,
      signal: AbortSignal.timeout(parsed.timeoutMs + 60_000),
      onProgress: (progress) => log(`task ${progress.taskId}: ${progress.state}`),
    },
  ).catch((error: unknown) => {
    if (error instanceof RemoteTaskTimeoutError) throw new Error(`${error.message} (--timeout)`);
    throw error;
  });
  if (outcome.kind === 'message') {
    const text = textOfParts(outcome.parts, MAX_ANSWER_BYTES);
    process.stdout.write(parsed.json ? `${JSON.stringify({ state: 'message', text })}\n` : `${text}\n`);
    return 0;
  }
  const { task } = outcome;
  const state = task.status.state;
  const text =
    state === 'completed' ? answerOfTask(task, MAX_ANSWER_BYTES) : statusText(task, MAX_ANSWER_BYTES);
  if (parsed.json) {
    process.stdout.write(
      `${JSON.stringify({ taskId: task.id, ...(task.contextId ? { contextId: task.contextId } : {}), state, text })}\n`,
    );
  } else {
    process.stdout.write(`${inertText(text, MAX_ANSWER_BYTES)}\n`);
    if (state === 'input-required')
      log(`the remote agent asks; answer with: durable-agent a2a send URL --task-id ${task.id} "<answer>"`);
    else if (state !== 'completed') log(`the remote task ${task.id} ended ${state}`);
  }
  return state === 'completed' || state === 'input-required' ? 0 : 1;
}

function cardLines(card: RemoteCard): string {
  return [
    card.name,
    ...(card.description ? [card.description] : []),
    `endpoint: ${card.endpoint} (JSON-RPC, A2A 1.0)`,
    `streaming: ${card.streaming ? 'yes' : 'no'}`,
    ...(card.skills.length ? [`skills: ${card.skills.join(', ')}`] : []),
    '',
  ].join('\n');
}
