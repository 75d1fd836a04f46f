import { randomUUID } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import { preciseNow } from './support/clock';
import type { BenchContext } from './support/context';
import { DrivenConversation } from './support/driven-conversation';
import { type HistoryEvent, eventTimeMs } from './support/history';
import { type Stack, bareStack, durableStack } from './support/stacks';
import { type Summary, round, summarize, table } from './support/stats';

const EventType = temporal.api.enums.v1.EventType;
const SLEEP_MS = 500;

export interface FanOutResult {
  sleepMs: number;
  repetitions: number;
  levels: Array<{
    stack: Stack['name'];
    calls: number;
    /** First tool scheduled to the next model call scheduled (all results in), server clock. */
    toolPhaseMs: Summary;
    ratio: number;
    /** First tool started to last tool started: how long the worker took to get them all going. */
    startSpreadMs: Summary;
    turnMs: Summary;
  }>;
  table: string;
}

/** The tool phase of a turn's events: from the first runTool scheduled to the next callModel scheduled. */
function toolPhase(events: HistoryEvent[], typeOf: (id: number) => string | undefined) {
  const scheduled = events.filter(
    (event) => event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
  );
  const tools = scheduled.filter(
    (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'runTool',
  );
  const firstTool = tools[0];
  if (!firstTool) throw new Error('no tool was scheduled');
  const nextModel = scheduled.find(
    (event) =>
      Number(event.eventId) > Number(firstTool.eventId) &&
      event.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel',
  );
  if (!nextModel) throw new Error('no model call after the tools');
  const toolIds = new Set(tools.map((event) => Number(event.eventId)));
  const starts = events
    .filter(
      (event) =>
        event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED &&
        (toolIds.has(Number(event.activityTaskStartedEventAttributes?.scheduledEventId)) ||
          typeOf(Number(event.activityTaskStartedEventAttributes?.scheduledEventId)) === 'runTool'),
    )
    .map(eventTimeMs);
  return {
    phaseMs: eventTimeMs(nextModel) - eventTimeMs(firstTool),
    startSpreadMs: starts.length ? Math.max(...starts) - Math.min(...starts) : 0,
  };
}

/** Bench 2: one turn whose model call asks for N parallel `sleep` calls of 500 ms each. */
export async function fanOut(context: BenchContext): Promise<FanOutResult> {
  const repetitions = context.quick ? 2 : 3;
  const result: FanOutResult = { sleepMs: SLEEP_MS, repetitions, levels: [], table: '' };
  // The bare Temporal loop shows what Temporal itself takes to start the calls.
  for (const stack of [durableStack(context), bareStack(context)]) {
    const taskQueue = `bench-fanout-${stack.name}-${randomUUID()}`;
    const worker = await stack.startWorker(taskQueue);
    try {
      const conversation = await DrivenConversation.start(
        context,
        stack,
        `fanout-${randomUUID()}`,
        taskQueue,
      );
      await conversation.runTurn({ tool: 'sleep', calls: 4, args: { ms: SLEEP_MS } });
      for (const calls of [1, 4, 16, 64]) {
        const phases: number[] = [];
        const spreads: number[] = [];
        const turns: number[] = [];
        for (let i = 0; i < repetitions; i++) {
          const started = preciseNow();
          const events = await conversation.runTurn({ tool: 'sleep', calls, args: { ms: SLEEP_MS } });
          turns.push(preciseNow() - started);
          const phase = toolPhase(events, conversation.typeOf);
          phases.push(phase.phaseMs);
          spreads.push(phase.startSpreadMs);
        }
        const toolPhaseMs = summarize(phases);
        result.levels.push({
          stack: stack.name,
          calls,
          toolPhaseMs,
          ratio: round(toolPhaseMs.median / SLEEP_MS),
          startSpreadMs: summarize(spreads),
          turnMs: summarize(turns),
        });
        context.log(`  ${stack.name}, ${calls} calls: tool phase median ${toolPhaseMs.median} ms`);
      }
    } finally {
      await worker.stop();
    }
  }
  result.table = table(
    [
      'stack',
      'parallel sleep(500 ms) calls',
      'tool phase median ms',
      'p95 ms',
      'ratio to 500 ms',
      'start spread median ms',
      'whole turn median ms',
    ],
    result.levels.map((level) => [
      level.stack,
      level.calls,
      level.toolPhaseMs.median,
      level.toolPhaseMs.p95,
      level.ratio.toFixed(2),
      level.startSpreadMs.median,
      level.turnMs.median,
    ]),
  );
  return result;
}
