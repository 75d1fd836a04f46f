import { CANCEL_SUBSCRIPTION_TOOL_NAME, RECEIVE_EVENT_TOOL_NAME } from '../shared/rap';
import { SPAWN_TOOL_NAME } from '../shared/sub-agents';
import { type ToolOutcome, errorOutcome, okOutcome } from '../shared/tool-outcome';
import type { RunContext } from './run-context';
import type { RunInProgress } from './run-in-progress';
import { runSubAgent } from './sub-agent';
import type { WorkflowToolRunner } from './tool-fan-out';
import type { OfferedTools } from './worker-tools';

/** Calls the runtime adds itself; a model that asks for one is told so. */
export const RESERVED_NAMES: ReadonlyMap<string, string> = new Map([
  [
    RECEIVE_EVENT_TOOL_NAME,
    `${RECEIVE_EVENT_TOOL_NAME} cannot be called: the runtime adds these calls itself to deliver subscription events.`,
  ],
]);

/**
 * The tools a run carries out in the workflow itself rather than on a worker, built once per run:
 * `sessions_spawn` (a sub-agent, as a child workflow) and `cancel_subscription` (a RAP
 * subscription of this conversation). Each reads the run as it is when called, steering included.
 */
export function workflowToolsFor(
  context: RunContext,
  run: RunInProgress,
  offered: OfferedTools,
): ReadonlyMap<string, WorkflowToolRunner> {
  return new Map<string, WorkflowToolRunner>([
    [
      SPAWN_TOOL_NAME,
      (call, args) =>
        runSubAgent(call, args, {
          conversationId: context.conversationId,
          run: run.run,
          options: context.options,
          events: context.events,
          offeredTools: offered.toModel(run.ownersRun),
          ownersRun: run.ownersRun,
          senderOfRun: run.senderOfRun,
          countStart: () => run.countSubAgent(),
          budget: context.budget,
        }),
    ],
    [CANCEL_SUBSCRIPTION_TOOL_NAME, (call, args) => cancelSubscription(context, call.name, args)],
  ]);
}

/** Cancels one of this conversation's active RAP subscriptions, named by the call that started it. */
function cancelSubscription(
  context: RunContext,
  toolName: string,
  args: Record<string, unknown>,
): ToolOutcome {
  const id = args.tool_call_id;
  if (typeof id !== 'string' || id === '') {
    return errorOutcome(
      toolName,
      'InvalidArgs',
      'tool_call_id (the call that started the subscription) is required',
    );
  }
  if (!context.rap.cancel(id)) {
    return errorOutcome(
      toolName,
      'NotFound',
      `this conversation has no active subscription started by tool call ${id}`,
    );
  }
  context.notify({ kind: 'cancel_tool_call', conversationId: context.conversationId, toolCallId: id });
  return okOutcome({ content: [{ type: 'text', text: `Subscription '${id}' cancelled successfully.` }] });
}
