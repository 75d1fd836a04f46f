/**
 * The kinds of conversation a chaos run drives, each with its own checks. Every kind asks the
 * fault model's agent to call `record` (a side effect that must happen at most once, its key in
 * the ledger) and answer; they differ in what else is in flight when a worker dies.
 */
import type { AgentClient } from '../src/client/agent-client';
import type { RunToFollow } from '../src/client/conversation-follow';
import type { AgentEvent } from '../src/shared/events';
import type { Message } from '../src/shared/messages';

export const TRIAL_KINDS = ['tools', 'approval', 'sub_agent', 'continue_as_new'] as const;
export type TrialKind = (typeof TRIAL_KINDS)[number];

export interface TrialResult {
  trial: string;
  kind: TrialKind;
  answered: boolean;
  seconds: number;
  problems: string[];
  /** Tool calls a worker's death cut off, reported to the model as timed out. */
  cutOff: number;
  /** Approvals decided while the run waited (approval trials). */
  approvals: number;
  /** Times the conversation continued as new (continue-as-new trials). */
  continuedAsNew: number;
  /** User messages the transcript holds more than once (goal 0: a retried send is taken once). */
  messagesTakenTwice: number;
}

export interface TrialContext {
  agent: AgentClient;
  /**
   * Sends a message through the gateway, retrying as a service does; with `options`, the first
   * message, which starts the conversation.
   */
  send(id: string, text: string, options?: Record<string, unknown>): Promise<RunToFollow>;
  /** Conversation ids are unique per run. */
  seed: number;
  random: () => number;
  /** Counts executions of a workflow id (all its runs). */
  runsOf(conversationId: string): Promise<number>;
}

/** Runs of a continue-as-new trial; with `maxHistoryEvents` at its floor (50) the second run's end passes it. */
const CONTINUE_AS_NEW_RUNS = 3;

export async function runTrial(index: number, kind: TrialKind, context: TrialContext): Promise<TrialResult> {
  const trial = `trial-${index}`;
  const id = `chaos-${context.seed}-${index}`;
  const started = Date.now();
  const result: TrialResult = {
    trial,
    kind,
    answered: false,
    seconds: 0,
    problems: [],
    cutOff: 0,
    approvals: 0,
    continuedAsNew: 0,
    messagesTakenTwice: 0,
  };
  try {
    switch (kind) {
      case 'tools':
        result.answered = await oneRun(context, id, trial, `Do ${trial}`, { endAfterFirstRun: true }, result);
        break;
      case 'approval':
        result.answered = await oneRun(
          context,
          id,
          trial,
          `Do ${trial}`,
          { endAfterFirstRun: true, approval: { mode: 'auto', tools: { record: 'ask' } } },
          result,
        );
        if (result.approvals === 0) result.problems.push('no approval was asked for');
        break;
      case 'sub_agent':
        result.answered = await oneRun(
          context,
          id,
          trial,
          `Do ${trial} with a sub-agent`,
          { endAfterFirstRun: true },
          result,
        );
        break;
      case 'continue_as_new': {
        let answered = true;
        for (let run = 1; run <= CONTINUE_AS_NEW_RUNS; run++) {
          const key = `${trial}-r${run}`;
          const options = run === 1 ? { maxHistoryEvents: 50 } : undefined;
          answered &&= await oneRun(context, id, key, `Do ${key}`, options, result);
        }
        result.answered = answered;
        result.continuedAsNew = (await context.runsOf(id)) - 1;
        if (result.continuedAsNew < 1) result.problems.push('never continued as new');
        break;
      }
    }
    const transcript = (await readState(context, id, result))?.transcript;
    if (transcript) {
      result.messagesTakenTwice = takenTwice(transcript).length;
      result.problems.push(...checkTranscript(transcript, kind === 'sub_agent' ? trial : undefined));
      result.cutOff = transcript.filter(
        (m) =>
          m.role === 'toolResult' &&
          (m.details as { errorKind?: string } | undefined)?.errorKind === 'Timeout',
      ).length;
    }
    if (kind === 'continue_as_new') await context.agent.end(id, 'chaos trial done').catch(() => undefined);
  } catch (error) {
    const cause = (error as Error).cause;
    result.problems.push(
      `lost: ${(error as Error).message}${cause instanceof Error ? ` (${cause.message})` : ''}`,
    );
  }
  result.seconds = (Date.now() - started) / 1_000;
  return result;
}

/**
 * Sends one message (with `options`, the one that starts the conversation) and follows its run to
 * the end; true when it answered `answered KEY`.
 */
async function oneRun(
  context: TrialContext,
  id: string,
  key: string,
  text: string,
  options: Record<string, unknown> | undefined,
  result: TrialResult,
): Promise<boolean> {
  const sent = await context.send(id, text, options && { approval: { mode: 'auto' }, ...options });
  const decisions: Array<Promise<void>> = [];
  const run = context.agent.followRun(sent);
  let next = await run.next();
  for (; !next.done; next = await run.next()) {
    const event = next.value;
    if (event.type === 'approval_requested') decisions.push(approveLater(context, id, event, result));
  }
  await Promise.all(decisions);
  const end = next.value;
  if (end.how !== 'finished') {
    result.problems.push(`conversation ended before the run finished: ${JSON.stringify(end)}`);
    return false;
  }
  const { outcome, answer } = end.event;
  const answered = outcome === 'answered' && answer.includes(`answered ${key}`);
  if (!answered) result.problems.push(`run ended ${outcome}: ${answer.slice(0, 200)}`);
  return answered;
}

/** A person who takes 0.2 to 2.2 s to approve; a worker may die meanwhile, so the decision is tried again. */
async function approveLater(
  context: TrialContext,
  id: string,
  event: Extract<AgentEvent, { type: 'approval_requested' }>,
  result: TrialResult,
): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 200 + context.random() * 2_000));
  for (let attempt = 1; ; attempt++) {
    try {
      await context.agent.approve(id, { toolCallId: event.toolCallId, decision: 'allow_once', by: 'chaos' });
      result.approvals++;
      return;
    } catch (error) {
      if (attempt >= 10) {
        result.problems.push(`approval of ${event.toolCallId} failed: ${(error as Error).message}`);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 2_000));
    }
  }
}

/** The conversation's state, asked for up to a minute: its workers may be dying and starting again. */
async function readState(context: TrialContext, id: string, result: TrialResult) {
  const deadline = Date.now() + 60_000;
  const failures = new Map<string, number>();
  for (;;) {
    try {
      return await context.agent.state(id);
    } catch (error) {
      const why = errorWithCause(error);
      failures.set(why, (failures.get(why) ?? 0) + 1);
      if (Date.now() > deadline) {
        const seen = [...failures].map(([message, count]) => `${count}x ${message}`).join('; ');
        result.problems.push(`transcript unreadable for a minute: ${seen}`);
        return undefined;
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/** An error's message with its cause's (a client's ServiceError wraps the gRPC status), to say why. */
function errorWithCause(error: unknown): string {
  const { message, cause } = error as Error & { cause?: { code?: unknown; details?: unknown } };
  return cause && typeof cause === 'object' && 'code' in cause
    ? `${message} (gRPC ${String(cause.code)}: ${String(cause.details ?? '')})`
    : message;
}

/** The ids of the user messages the transcript holds more than once. */
function takenTwice(transcript: Message[]): string[] {
  const ids = transcript.flatMap((m) => (m.role === 'user' ? [m.messageId] : []));
  return [...new Set(ids.filter((id, at) => ids.indexOf(id) !== at))];
}

/**
 * Every user message once, every tool call with exactly one result; with `subAgentOf`, each
 * sub-agent call that ran answered for its task.
 */
export function checkTranscript(transcript: Message[], subAgentOf?: string): string[] {
  const problems = takenTwice(transcript).map((id) => `message ${id} taken more than once`);
  const asked = transcript.flatMap((m) =>
    m.role === 'assistant' ? m.content.filter((c) => c.type === 'toolCall') : [],
  );
  for (const call of asked) {
    const results = transcript.filter((m) => m.role === 'toolResult' && m.toolCallId === call.id);
    if (results.length !== 1) problems.push(`${call.id} has ${results.length} results`);
  }
  if (subAgentOf) {
    for (const message of transcript) {
      if (message.role !== 'toolResult' || message.toolName !== 'sessions_spawn' || message.isError) continue;
      const text = message.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
      if (!text.includes(`answered ${subAgentOf}-sub`))
        problems.push(`sub-agent answered: ${text.slice(0, 200)}`);
    }
  }
  return problems;
}
