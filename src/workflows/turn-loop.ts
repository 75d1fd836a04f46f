import {
  ActivityFailure,
  ApplicationFailure,
  allHandlersFinished,
  condition,
  isCancellation,
  patched,
} from '@temporalio/workflow';
import { EVENT_TEXT_PREVIEW_CHARS } from '../shared/constants';
import type { ConversationOptions } from '../shared/conversation-options';
import { conversationToolPolicySteps } from './conversation-tool-policy';
import { type AssistantMessage, type UserMessage, textOf, toolCallsOf } from '../shared/messages';
import { isOwner } from './owners';
import { CANCEL_SUBSCRIPTION_TOOL_NAME, RECEIVE_EVENT_TOOL_NAME, type RapNotice } from '../shared/rap';
import { SPAWN_TOOL_NAME } from '../shared/sub-agents';
import { definedScope } from '../shared/tool-run';
import { type ToolOutcome, toolErrorOutcome } from '../shared/tool-errors';
import {
  type ToolDescriptor,
  type ToolDescriptorInput,
  ToolDescriptorSchema,
  type ToolListing,
} from '../shared/tool-descriptor';
import { applyToolPolicyPipeline } from '../shared/tool-policy';
import { catalogActivities, modelActivities } from './activity-proxies';
import type { ApprovalBook } from './approval-book';
import { type CompactionRequests, compactIfNeeded } from './compaction';
import type { EventLog } from './event-log';
import type { RapThread } from './rap-thread';
import type { RunControl } from './run-control';
import { runSubAgent } from './sub-agent';
import { modelCallSummary } from '../shared/activity-summary';
import { type WorkflowToolRunner, notStartedResults, runToolCalls } from './tool-fan-out';

/** Calls the runtime adds itself; a model that asks for one is told so. */
const RESERVED_NAMES: ReadonlyMap<string, string> = new Map([
  [
    RECEIVE_EVENT_TOOL_NAME,
    `${RECEIVE_EVENT_TOOL_NAME} cannot be called: the runtime adds these calls itself to deliver subscription events.`,
  ],
]);
import type { Transcript } from './transcript';

/** A run handed over to the next execution between two turns (continue-as-new), and where it stood. */
export interface PausedRun {
  run: number;
  messageIds: string[];
  /** The model call it resumes with. */
  iteration: number;
  ownersRun: boolean;
  senderOfRun?: string;
  /** Sub-agents the run has started so far. */
  subAgentsStarted?: number;
}

/** Marks executions that may continue as new between the turns of a run, not only between runs. */
const CONTINUE_AS_NEW_BETWEEN_TURNS = 'continue-as-new-between-turns';

export interface RunContext {
  conversationId: string;
  run: number;
  options: ConversationOptions;
  transcript: Transcript;
  events: EventLog;
  /** Tools the worker offers, looked up once per conversation. */
  tools: () => Promise<ReadonlyMap<string, ToolDescriptor>>;
  approvals: ApprovalBook;
  /** Steer and abort for this run; the loop runs inside `control.scope`. */
  control: RunControl;
  compactionRequests: CompactionRequests;
  /** RAP subscriptions and their waiting events, user choices, views. */
  rap: RapThread;
  /** Sends a best-effort notice to the RAP tool servers without waiting for it. */
  notify: (notice: RapNotice) => void;
  /** The history is long enough to continue as new (Temporal's suggestion or `maxHistoryEvents`). */
  historyIsLong: () => boolean;
}

const STEERED = 'interrupted: the user steered the conversation before it finished';
const ABORTED = 'interrupted: the run was aborted';

/**
 * One run: the model is called, the tools it asks for run in parallel, their results go back to
 * the model, until it answers without tool calls or `maxToolIterations` model calls asked for tools.
 * A steering message interrupts the turn's tools and joins the transcript after their results; an
 * abort stops the run wherever it is. Every tool call the model made gets a result either way.
 */
export async function runTurnLoop(
  context: RunContext,
  messages: UserMessage[],
  resumed?: PausedRun,
): Promise<PausedRun | undefined> {
  const { run, transcript, events, options, control } = context;
  const messageIds = resumed?.messageIds ?? messages.map((message) => message.messageId);
  if (!resumed) {
    transcript.append(...messages);
    events.record(run, { type: 'run_started', messageIds });
  }
  const finish = (outcome: 'answered' | 'max_tool_iterations' | 'error' | 'aborted', answer = '') =>
    events.record(run, { type: 'run_finished', messageIds, outcome, answer });
  const abortRun = (interrupted: string[]) => {
    events.record(run, { type: 'aborted', ...control.aborted, interrupted });
    finish('aborted');
  };
  /** An activity that failed for good ends the run, never the conversation. */
  const failRun = (what: string, error: unknown) => {
    if (isCancellation(error) && control.aborted) return abortRun([]);
    if (isCancellation(error)) throw error;
    events.record(run, { type: 'error', message: `${what}: ${failureMessage(error)}` });
    finish('error');
  };
  /** Whether every message this run took so far came from an owner: only then may `ownerOnly` tools run. */
  // A run that only subscription events started was sent by no one: an owner's run only when everyone is one.
  let ownersRun =
    resumed?.ownersRun ??
    (messages.length > 0
      ? messages.every((message) => isOwner(message.sender, options.owners))
      : isOwner(undefined, options.owners));
  /** The latest named sender among the run's messages and steering. */
  let senderOfRun = resumed ? resumed.senderOfRun : lastSender(messages);
  let subAgentsStarted = resumed?.subAgentsStarted ?? 0;
  const applySteering = (interrupted: string[]) => {
    const steering = control.takeSteering();
    ownersRun &&= steering.every((message) => isOwner(message.sender, options.owners));
    senderOfRun = lastSender(steering) ?? senderOfRun;
    transcript.append(...steering);
    for (const message of steering) {
      events.record(run, {
        type: 'steered',
        messageId: message.messageId,
        text: message.content.slice(0, EVENT_TEXT_PREVIEW_CHARS),
        interrupted,
      });
    }
  };

  let tools: ReadonlyMap<string, ToolDescriptor>;
  try {
    tools = await context.tools();
  } catch (error) {
    failRun("could not list the worker's tools", error);
    return;
  }
  // The tools the model sees are exactly those the conversation's policy steps keep; what they got wrong is said.
  const policy = applyToolPolicyPipeline([...tools.keys()], conversationToolPolicySteps(options));
  if (!resumed) for (const message of policy.warnings) events.record(run, { type: 'warning', message });
  const offered = policy.tools;
  const offeredToModel = () => (ownersRun ? offered : offered.filter((name) => !tools.get(name)!.ownerOnly));

  for (let iteration = resumed?.iteration ?? 1; ; iteration++) {
    // Subscription events that came in (before the run or during its last turn) join before the model call.
    if (context.rap.hasEvents)
      transcript.append(...context.rap.takeEventMessages(options.model ?? 'runtime'));
    try {
      const forced = context.compactionRequests.take();
      const receipt = await compactIfNeeded(
        {
          conversationId: context.conversationId,
          run,
          transcript,
          events,
          settings: options.compaction,
          model: options.model,
        },
        forced,
      );
      context.compactionRequests.report(receipt, forced);
    } catch (error) {
      failRun('compaction', error);
      return;
    }
    // Between turns of a long run: hand over to a fresh history, which resumes the run at this turn.
    if (
      iteration > (resumed?.iteration ?? 1) &&
      context.historyIsLong() &&
      patched(CONTINUE_AS_NEW_BETWEEN_TURNS)
    ) {
      try {
        await condition(allHandlersFinished);
      } catch (error) {
        failRun('continue-as-new', error);
        return;
      }
      // A steer that came meanwhile is answered here first; the hand-over waits for the next turn.
      if (!control.hasSteering && !control.aborted) {
        return {
          run,
          messageIds,
          iteration,
          ownersRun,
          ...(senderOfRun !== undefined ? { senderOfRun } : {}),
          ...(subAgentsStarted ? { subAgentsStarted } : {}),
        };
      }
    }
    const delta = transcript.deltaForModel(context.conversationId);
    let reply: AssistantMessage;
    try {
      reply = await modelActivities.callModel.executeWithOptions(
        { summary: modelCallSummary(options.model, run, iteration) },
        [
          {
            transcript: delta,
            toolNames: offeredToModel(),
            model: options.model,
            systemPrompt: options.systemPrompt,
          },
        ],
      );
    } catch (error) {
      failRun('model call failed', error);
      return;
    }
    transcript.markSent(delta);
    transcript.append(reply);
    const calls = toolCallsOf(reply);
    const text = textOf(reply);
    events.record(run, {
      type: 'model_response',
      iteration,
      text: text.slice(0, EVENT_TEXT_PREVIEW_CHARS),
      toolCalls: calls.map((call) => ({ id: call.id, name: call.name })),
    });
    if (calls.length === 0) {
      if (!control.hasSteering) {
        finish('answered', text);
        return;
      }
      applySteering([]);
      continue;
    }

    // A steer that came during the model call applies now: the calls it asked for are not run.
    context.rap.callsStarted(calls);
    const results = control.hasSteering
      ? notStartedResults(calls, STEERED)
      : await control.runTools(() =>
          runToolCalls(calls, {
            scope: definedScope({
              conversationId: context.conversationId,
              workspace: options.workspace,
              agentId: options.agentId,
              execSecurity: options.execSecurity,
              ancestors: options.ancestors?.length ? options.ancestors : undefined,
              userId: senderOfRun,
            }),
            run,
            tools: new Map(offered.map((name) => [name, tools.get(name)!])),
            workflowTools: new Map<string, WorkflowToolRunner>([
              [
                SPAWN_TOOL_NAME,
                (call, args) =>
                  runSubAgent(call, args, {
                    conversationId: context.conversationId,
                    run,
                    options,
                    events,
                    offeredTools: offeredToModel(),
                    ownersRun,
                    senderOfRun,
                    countStart: () => ++subAgentsStarted,
                  }),
              ],
              [CANCEL_SUBSCRIPTION_TOOL_NAME, (call, args) => cancelSubscription(context, call.name, args)],
            ]),
            reservedNames: RESERVED_NAMES,
            senderIsOwner: ownersRun,
            events,
            approvals: context.approvals,
            approvalSettings: options.approval,
            interruption: () => (control.aborted ? ABORTED : STEERED),
            asyncCallInterrupted: (call) =>
              context.notify({
                kind: 'cancel_tool_call',
                conversationId: context.conversationId,
                toolCallId: call.id,
              }),
          }),
        );
    context.rap.callsFinished(calls, results, run);
    transcript.append(...results);
    const interrupted = results.filter((result) => result.aborted).map((result) => result.toolCallId);

    if (control.aborted) {
      abortRun(interrupted);
      return;
    }
    if (control.hasSteering) {
      // A person just spoke: the model answers them even when the tool iteration limit is reached.
      applySteering(interrupted);
      continue;
    }
    if (iteration >= options.maxToolIterations) {
      events.record(run, {
        type: 'error',
        message: `max tool iterations (${options.maxToolIterations}) exceeded`,
      });
      finish('max_tool_iterations');
      return;
    }
  }
}

export async function lookUpTools(): Promise<{
  tools: ReadonlyMap<string, ToolDescriptor>;
  warnings: string[];
}> {
  // Workers before external tools returned the bare list, which recorded histories replay.
  const listing: ToolListing | ToolDescriptorInput[] = await catalogActivities.listTools();
  const { tools, warnings } = Array.isArray(listing) ? { tools: listing, warnings: [] } : listing;
  // Parsed so descriptors recorded by older workers get today's defaults (no risk recorded: never asks).
  const descriptors = tools.map((descriptor) => ToolDescriptorSchema.parse(descriptor));
  return { tools: new Map(descriptors.map((descriptor) => [descriptor.name, descriptor])), warnings };
}

/** rap spec, "Built-in cancel_subscription tool": only this conversation's active subscriptions. */
function cancelSubscription(
  context: RunContext,
  toolName: string,
  args: Record<string, unknown>,
): ToolOutcome {
  const id = args.tool_call_id;
  if (typeof id !== 'string' || id === '') {
    return toolErrorOutcome(
      toolName,
      'InvalidArgs',
      'tool_call_id (the call that started the subscription) is required',
    );
  }
  if (!context.rap.cancel(id)) {
    return toolErrorOutcome(
      toolName,
      'NotFound',
      `this conversation has no active subscription started by tool call ${id}`,
    );
  }
  context.notify({ kind: 'cancel_tool_call', conversationId: context.conversationId, toolCallId: id });
  return {
    content: [{ type: 'text', text: `Subscription '${id}' cancelled successfully.` }],
    isError: false,
  };
}

function lastSender(messages: UserMessage[]): string | undefined {
  return [...messages].reverse().find((message) => message.sender !== undefined)?.sender;
}

function failureMessage(error: unknown): string {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (cause instanceof ApplicationFailure) return cause.message;
  if (cause instanceof Error) return cause.message;
  return String(cause);
}
