import type { PayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { z } from 'zod';
import { type Message, MessageSchema } from '../shared/messages';
import { type ExecutionHistory, buildTimeline } from './build-timeline';
import { int64 } from './history-numbers';
import type { ModelCallItem } from './timeline';

type Payload = temporal.api.common.v1.IPayload;

/** The transcript of a conversation as its workflow held it when a run ended, and where that was. */
export interface TranscriptAtRun {
  messages: Message[];
  /** The options the execution holding the end of the run was started with (continue-as-new hands them on). */
  options: unknown;
  /** The Temporal run id of that execution. */
  runId: string;
  /** Runs the histories show in all. */
  runs: number;
}

/** Why a transcript cannot be taken at a run: out of range, or the history does not show it whole. */
export class TranscriptAtRunError extends Error {}

/** Model-call and summary activities: their input carries the transcript as a delta (see TranscriptDelta). */
const ACTIVITIES_WITH_TRANSCRIPT = new Set(['callModel', 'summarizeTranscript']);

const DeltaInputSchema = z.object({
  transcript: z.object({
    generation: z.number(),
    base: z.number(),
    newMessages: z.array(MessageSchema),
  }),
});
/** Checked with the schemas, then used as recorded: parsing would drop fields the schemas do not name. */
interface DeltaInput {
  transcript: { generation: number; base: number; newMessages: Message[] };
  toolNames?: unknown;
  model?: unknown;
  systemPrompt?: unknown;
}
interface CarriedTranscriptInput {
  carried: { transcript: { messages: Message[]; generation: number } };
}
const CarriedTranscriptSchema = z.object({
  carried: z.object({
    transcript: z.object({ messages: z.array(MessageSchema), generation: z.number() }),
  }),
});

/**
 * The transcript at the end of run `atRun` (runs numbered as `history` numbers them), from the
 * histories of a conversation's executions, oldest first, payloads decoded. Rebuilt the way a
 * model-call worker rebuilds it: the transcript an execution was started with (continue-as-new
 * carries it whole), then each model call's delta (the first `base` messages of its generation plus
 * the new ones), so compaction and continue-as-new are taken as the workflow did them. A run must
 * have ended with the model's answer, which is its last message; pure.
 */
export function transcriptAtRun(
  conversationId: string,
  executions: ExecutionHistory[],
  atRun: number,
  converter: PayloadConverter,
): TranscriptAtRun {
  const timeline = buildTimeline(conversationId, executions, converter);
  const calls = timeline.items.filter((item): item is ModelCallItem => item.kind === 'model_call');
  const lastCallOf = (run: number) => calls.filter((call) => call.run === run).at(-1);
  const answered = (call: ModelCallItem) => call.outcome === 'completed' && call.toolCalls.length === 0;
  const runs = Math.max(0, ...calls.map((call) => call.run ?? 0));
  if (!Number.isInteger(atRun) || atRun < 1 || atRun > runs) {
    throw new TranscriptAtRunError(
      runs === 0
        ? `conversation ${conversationId} has no run to fork at`
        : `run ${atRun} is out of range: conversation ${conversationId} has runs 1 to ${runs}`,
    );
  }
  const last = lastCallOf(atRun);
  if (!last) {
    throw new TranscriptAtRunError(
      `the histories given do not show run ${atRun} of conversation ${conversationId} (an execution is missing)`,
    );
  }
  if (!answered(last)) {
    throw new TranscriptAtRunError(
      `run ${atRun} of conversation ${conversationId} did not end with the model's answer (it is still running, failed, was aborted or hit maxToolIterations), so its end cannot be told from history`,
    );
  }
  const execution = executions[last.execution - 1]!;
  const { seen, reply } = transcriptAroundModelCall(execution, last.eventId, converter);
  const startInput = valueOf(
    execution.history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads,
    converter,
  );
  return {
    messages: [...seen, reply],
    options: (startInput as { options?: unknown } | undefined)?.options,
    runId: execution.runId,
    runs,
  };
}

/** A model call as history records it: the whole transcript it was sent and what it answered. */
export interface RecordedModelCall {
  /** Its ActivityTaskScheduled event, numbered within its execution. */
  eventId: number;
  /** The transcript the call was sent (rebuilt from the delta its input carried). */
  messages: Message[];
  /** The tools it was offered, by name. */
  toolNames: string[];
  model?: string;
  systemPrompt?: string;
  /** The model's message, when the call completed with one. */
  reply?: Message;
}

/**
 * Every model call of one execution (and summary call, whose transcript is the one it summarised),
 * in history order, each with the whole transcript it was sent: the transcript the execution was
 * started with (continue-as-new carries it whole), then each call's delta, the first `base`
 * messages of its generation plus the new ones, as the model-call worker rebuilt it.
 */
export function recordedModelCalls(
  { history }: ExecutionHistory,
  converter: PayloadConverter,
): RecordedModelCall[] {
  const byGeneration = new Map<number, Message[]>();
  const calls = new Map<number, RecordedModelCall>();
  for (const event of history.events ?? []) {
    const started = event.workflowExecutionStartedEventAttributes;
    if (started) {
      const input = valueOf(started.input?.payloads, converter);
      if (CarriedTranscriptSchema.safeParse(input).success) {
        const { generation, messages } = (input as CarriedTranscriptInput).carried.transcript;
        byGeneration.set(generation, messages);
      }
    }
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled && ACTIVITIES_WITH_TRANSCRIPT.has(scheduled.activityType?.name ?? '')) {
      const input = valueOf(scheduled.input?.payloads, converter);
      if (!DeltaInputSchema.safeParse(input).success) continue;
      const { transcript, toolNames, model, systemPrompt } = input as DeltaInput;
      const { generation, base, newMessages } = transcript;
      const earlier = byGeneration.get(generation) ?? [];
      if (earlier.length < base) {
        throw new TranscriptAtRunError(
          `the history does not show the first ${base} messages of the transcript at event ${int64(event.eventId)}`,
        );
      }
      const whole = [...earlier.slice(0, base), ...newMessages];
      byGeneration.set(generation, whole);
      const eventId = int64(event.eventId);
      calls.set(eventId, {
        eventId,
        messages: whole,
        toolNames: Array.isArray(toolNames) ? toolNames : [],
        ...(typeof model === 'string' ? { model } : {}),
        ...(typeof systemPrompt === 'string' ? { systemPrompt } : {}),
      });
    }
    const completed = event.activityTaskCompletedEventAttributes;
    const call = completed ? calls.get(int64(completed.scheduledEventId)) : undefined;
    if (call && completed) {
      const reply = valueOf(completed.result?.payloads, converter);
      if (MessageSchema.safeParse(reply).success) call.reply = reply as Message;
    }
  }
  return [...calls.values()];
}

/** The transcript a model call was sent (whole, rebuilt from deltas) and the message it answered with. */
function transcriptAroundModelCall(
  execution: ExecutionHistory,
  scheduledEventId: number,
  converter: PayloadConverter,
): { seen: Message[]; reply: Message } {
  const call = recordedModelCalls(execution, converter).find((c) => c.eventId === scheduledEventId);
  if (!call?.reply) {
    throw new TranscriptAtRunError(`the model's answer at event ${scheduledEventId} is not in the history`);
  }
  return { seen: call.messages, reply: call.reply };
}

function firstPayload(payloads: Payload[] | null | undefined): Payload | undefined {
  return payloads?.[0] ?? undefined;
}

function valueOf(payloads: Payload[] | null | undefined, converter: PayloadConverter): unknown {
  const payload = firstPayload(payloads);
  return payload
    ? converter.fromPayload(payload as Parameters<PayloadConverter['fromPayload']>[0])
    : undefined;
}
