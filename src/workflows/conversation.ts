import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { MAX_EVENTS_KEPT, TRANSCRIPT_PAGE_BYTES } from '../shared/constants';
import {
  type ConversationStatus,
  type ConversationStatusSummary,
  UserMessageInputSchema,
  endSignal,
  eventsQuery,
  stateQuery,
  statusQuery,
  transcriptPageQuery,
  userMessageSignal,
} from '../shared/conversation-api';
import { type ConversationOptionsInput, ConversationOptionsSchema } from '../shared/conversation-options';
import type { UserMessage } from '../shared/messages';
import type { ToolDescriptor } from '../shared/tool-descriptor';
import { EventLog } from './event-log';
import { Transcript } from './transcript';
import { lookUpTools, runTurnLoop } from './turn-loop';
import { workflowTime } from './workflow-time';

export interface ConversationInput {
  options?: ConversationOptionsInput;
}

export interface ConversationResult {
  runs: number;
  messages: number;
  endedBy: 'end' | 'idle_timeout';
}

/**
 * One conversation, for as long as it lasts: idle between runs, a run per user message (messages
 * that arrive during a run queue and are taken together by the next run), ended by `end` or
 * after `idleTimeoutMs` without a message.
 */
export async function conversation(input: ConversationInput = {}): Promise<ConversationResult> {
  const parsedOptions = ConversationOptionsSchema.safeParse(input.options ?? {});
  if (!parsedOptions.success) {
    throw ApplicationFailure.nonRetryable(`invalid conversation options: ${parsedOptions.error.message}`);
  }
  const options = parsedOptions.data;
  const conversationId = workflowInfo().workflowId;
  const transcript = new Transcript();
  const events = new EventLog(MAX_EVENTS_KEPT);
  const queue: UserMessage[] = [];
  let status: ConversationStatus = 'idle';
  let runCount = 0;
  let endRequested = false;
  let tools: ReadonlyMap<string, ToolDescriptor> | undefined;

  setHandler(userMessageSignal, (message) => {
    const parsed = UserMessageInputSchema.safeParse(message);
    if (!parsed.success) {
      events.record(runCount, { type: 'error', message: `userMessage ignored: ${parsed.error.message}` });
      return;
    }
    queue.push({
      role: 'user',
      content: parsed.data.text,
      messageId: parsed.data.messageId,
      timestamp: workflowTime(),
    });
  });
  setHandler(endSignal, () => {
    endRequested = true;
  });
  const summary = (): ConversationStatusSummary => ({
    status,
    runCount,
    queuedMessages: queue.length,
    transcriptLength: transcript.length,
    lastSeq: events.lastSeq,
  });
  setHandler(statusQuery, summary);
  setHandler(stateQuery, () => ({ ...summary(), transcript: transcript.all(), events: events.all() }));
  setHandler(eventsQuery, (afterSeq) => events.after(afterSeq));
  setHandler(transcriptPageQuery, (request) => transcript.page(request, TRANSCRIPT_PAGE_BYTES));

  const hasWork = () => queue.length > 0 || endRequested;
  /** False when the idle timeout passed with nothing to do. */
  const waitForWork = async (): Promise<boolean> => {
    if (options.idleTimeoutMs === undefined) {
      await condition(hasWork);
      return true;
    }
    return condition(hasWork, options.idleTimeoutMs);
  };

  let endedBy: ConversationResult['endedBy'] = 'end';
  for (;;) {
    if (!(await waitForWork())) {
      endedBy = 'idle_timeout';
      break;
    }
    if (queue.length === 0) break;
    status = 'running';
    runCount++;
    await runTurnLoop(
      {
        conversationId,
        run: runCount,
        options,
        transcript,
        events,
        tools: async () => (tools ??= await lookUpTools()),
      },
      queue.splice(0),
    );
    status = 'idle';
  }
  status = 'ended';
  await condition(allHandlersFinished);
  return { runs: runCount, messages: transcript.length, endedBy };
}
