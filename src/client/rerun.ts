import type { Client } from '@temporalio/client';
import type { PayloadConverter } from '@temporalio/common';
import type { ExecutionHistory } from '../history/build-timeline';
import { fetchConversationHistories } from '../history/conversation-history';
import { decodeHistoryPayloads } from '../history/decode-history-payloads';
import { type RerunPlan, type RunRecord, runRecord } from '../history/rerun-plan';
import { stateAtRun } from '../history/state-at-run';
import type { ConversationOptionsInput } from '../shared/conversation-options';
import type { AgentEvent } from '../shared/events';
import type { RerunTools } from '../shared/rerun';
import type { AgentClient } from './agent-client';
import { forkStart, optionsOfOriginal, startFork } from './fork-start';

/** What changes in a rerun; everything else is the original's. */
export interface RerunVariant {
  /** A model name for the worker's endpoint. */
  model?: string;
  systemPrompt?: string;
  tools: RerunTools;
  /** Where the rerun's tools work, instead of the original's workspace. */
  workspace?: string;
}

/** One run of the original beside the same run of the rerun. */
export interface TurnComparison {
  run: number;
  /** The user messages both were given. */
  messages: string[];
  original: Omit<RunRecord, 'run' | 'messages'>;
  /** `ended`: why the rerun has no answer; `refused` when its model's provider refused to answer. */
  rerun: Omit<RunRecord, 'run' | 'messages'> & { ended?: string; refused?: true };
  answerChanged: boolean;
  toolsChanged: boolean;
}

export interface RerunReport {
  conversationId: string;
  original: string;
  fromRun: number;
  variant: RerunVariant;
  turns: TurnComparison[];
}

export interface RerunDeps {
  agent: AgentClient;
  client: Client;
  /** Told of each decision the rerun waits for (`--tools ask`, or the original's own approvals). */
  onEvent?: (event: AgentEvent) => void;
}

/**
 * Runs the original's user messages again, run by run from `plan.fromRun`, in a new conversation
 * `newId` with the variant's model and prompt; runs before `fromRun` are taken as they were (a fork
 * at `fromRun - 1`, which the worker checks against the original). Tool calls are answered from the
 * recorded results as `variant.tools` says. Stops at the first run that does not finish.
 */
export async function rerunConversation(
  deps: RerunDeps,
  plan: RerunPlan,
  executions: ExecutionHistory[],
  newId: string,
  variant: RerunVariant,
): Promise<RerunReport> {
  const { agent, client } = deps;
  const converter = client.options.loadedDataConverter.payloadConverter;
  const rerunOption: ConversationOptionsInput = {
    ...(variant.model !== undefined ? { model: variant.model } : {}),
    ...(variant.systemPrompt !== undefined ? { systemPrompt: variant.systemPrompt } : {}),
    rerun: { of: plan.conversationId, tools: variant.tools, recorded: plan.recorded },
  };
  if (plan.fromRun > 1) {
    const start = forkStart(plan.conversationId, executions, plan.fromRun - 1, converter, variant.workspace);
    await startFork(agent, newId, { ...start, options: { ...start.options, ...rerunOption } });
  } else {
    await agent.start(newId, { ...optionsOfOriginal(plan.options, variant.workspace), ...rerunOption });
  }
  const ended = new Map<number, string>();
  const refused = new Set<number>();
  for (const run of plan.runs) {
    const [first, ...rest] = run.messages;
    const text = [first, ...rest].map((message) => message?.text ?? '').join('\n\n');
    const images = run.messages.flatMap((message) => message.images ?? []);
    const sent = await agent.send(newId, text, {
      start: false,
      ...(first?.sender !== undefined ? { sender: first.sender } : {}),
      ...(images.length ? { images } : {}),
    });
    const events = agent.followRun(sent);
    let next = await events.next();
    while (!next.done) {
      deps.onEvent?.(next.value);
      next = await events.next();
    }
    const end = next.value;
    if (end.how !== 'finished') {
      ended.set(
        run.run,
        end.how === 'stopped'
          ? 'stopped following'
          : `the conversation ended (${end.executionStatus}${end.failure ? `: ${end.failure}` : ''})`,
      );
      break;
    }
    if (end.event.outcome === 'refused') refused.add(run.run);
    if (end.event.outcome !== 'answered') ended.set(run.run, runEndWords(end.event));
  }
  const rerunExecutions = await readDecoded(client, newId);
  return {
    conversationId: newId,
    original: plan.conversationId,
    fromRun: plan.fromRun,
    variant,
    turns: plan.runs.map((original) =>
      compareRun(
        original,
        rerunRecord(newId, rerunExecutions, original.run, converter),
        ended.get(original.run),
        refused.has(original.run),
      ),
    ),
  };
}

/** Why a rerun's run has no answer; a refusal with the provider's words. */
function runEndWords(event: Extract<AgentEvent, { type: 'run_finished' }>): string {
  if (event.outcome !== 'refused') return `the run ended ${event.outcome}`;
  return `refused by the model's provider${event.refusal ? `: ${event.refusal}` : ''}`;
}

function rerunRecord(
  conversationId: string,
  executions: ExecutionHistory[],
  run: number,
  converter: PayloadConverter,
): RunRecord | undefined {
  try {
    return runRecord(stateAtRun(conversationId, executions, run, converter));
  } catch {
    return undefined;
  }
}

function compareRun(
  original: RunRecord,
  rerun: RunRecord | undefined,
  ended: string | undefined,
  refused: boolean,
): TurnComparison {
  const { run, messages, ...was } = original;
  const is: Omit<RunRecord, 'run' | 'messages'> = rerun
    ? {
        ...(rerun.answer !== undefined ? { answer: rerun.answer } : {}),
        toolCalls: rerun.toolCalls,
        tokens: rerun.tokens,
      }
    : { toolCalls: [], tokens: { input: 0, output: 0 } };
  const shown = (record: Pick<RunRecord, 'toolCalls'>) =>
    JSON.stringify(record.toolCalls.map((call) => [call.name, call.arguments]));
  return {
    run,
    messages: messages.map((message) => message.text),
    original: was,
    rerun: {
      ...is,
      ...(ended !== undefined ? { ended } : rerun ? {} : { ended: 'not run' }),
      ...(refused ? { refused: true as const } : {}),
    },
    answerChanged: was.answer !== is.answer,
    toolsChanged: shown(was) !== shown(is),
  };
}

async function readDecoded(client: Client, conversationId: string): Promise<ExecutionHistory[]> {
  const executions = await fetchConversationHistories(client, conversationId);
  for (const { history } of executions) {
    await decodeHistoryPayloads(history, client.options.loadedDataConverter.payloadCodecs);
  }
  return executions;
}
