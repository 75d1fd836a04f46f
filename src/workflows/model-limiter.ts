import { allHandlersFinished, condition, makeContinueAsNewFunc, setHandler } from '@temporalio/workflow';
import {
  type LeaseAnswer,
  LeaseRequestSchema,
  type ModelLimiterInput,
  acquireModelLeaseUpdate,
  modelLimiterStatusQuery,
  releaseModelLeaseSignal,
  renewModelLeaseSignal,
} from '../shared/model-limiter';
import { LeaseBook, emptyLeaseBook } from '../shared/lease-book';
import { WORKFLOW_TASK_TIMEOUT_MS } from '../shared/workflow-task-bounds';
import { workflowTime } from './workflow-time';
import { runHistoryIsLong } from './history-bound';

/**
 * The fleet's limiter for one model endpoint (workflow id `model-limiter:<endpoint>`): model-call
 * activities wait in its `acquireModelLease` update until they hold a lease, renew it while the call
 * runs and release it when it ends (see LeaseBook for the rules). It runs until Temporal suggests a
 * new run (or its history reaches `maxHistoryEvents`), then hands its state over; callers waiting at
 * that moment are told to ask again, which reaches the new run with their places kept.
 */
export async function modelLimiter(input: ModelLimiterInput): Promise<void> {
  const book = new LeaseBook(input.carried ?? emptyLeaseBook(input.limits));
  let changed = false;
  let handingOver = false;

  setHandler(
    acquireModelLeaseUpdate,
    async (request): Promise<LeaseAnswer> => {
      book.adopt(request.limits);
      book.ask(request);
      changed = true;
      await condition(() => book.holds(request.ticket) || !book.isWaiting(request.ticket) || handingOver);
      return { granted: book.holds(request.ticket) };
    },
    {
      validator: (request) => {
        LeaseRequestSchema.parse(request);
      },
    },
  );
  setHandler(modelLimiterStatusQuery, () => ({
    limits: book.state.limits,
    held: book.heldCount,
    waiting: book.waitingCount,
    pausedUntilMs: book.state.pausedUntilMs,
  }));
  setHandler(renewModelLeaseSignal, ({ ticket }) => {
    book.renew(ticket, workflowTime());
  });
  setHandler(releaseModelLeaseSignal, ({ ticket, outcome, retryAfterMs }) => {
    book.release(ticket, outcome, workflowTime(), retryAfterMs);
    changed = true;
  });

  const { maxHistoryEvents } = input;
  while (!runHistoryIsLong(maxHistoryEvents)) {
    const now = workflowTime();
    book.expire(now);
    book.grant(now);
    changed = false;
    const wakeAt = book.wakeAtMs(now);
    if (wakeAt === undefined) await condition(() => changed || runHistoryIsLong(maxHistoryEvents));
    else await condition(() => changed, Math.max(1, Math.ceil(wakeAt - now)));
  }
  handingOver = true;
  await condition(allHandlersFinished);
  await makeContinueAsNewFunc<typeof modelLimiter>({ workflowTaskTimeout: WORKFLOW_TASK_TIMEOUT_MS })({
    limits: book.state.limits,
    carried: book.state,
    ...(maxHistoryEvents !== undefined ? { maxHistoryEvents } : {}),
  });
}
