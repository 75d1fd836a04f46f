import { ActivityFailure, ApplicationFailure, isCancellation } from '@temporalio/workflow';
import { EVENT_TEXT_PREVIEW_CHARS } from '../shared/constants';
import type { ConversationOptions } from '../shared/conversation-options';
import { conversationToolPolicySteps } from '../shared/conversation-tool-policy';
import { type AssistantMessage, type UserMessage, textOf, toolCallsOf } from '../shared/messages';
import { isOwner } from '../shared/owners';
import { type ToolDescriptor, ToolDescriptorSchema } from '../shared/tool-descriptor';
import { applyToolPolicyPipeline } from '../shared/tool-policy';
import { catalogActivities, modelActivities } from './activity-proxies';
import type { ApprovalBook } from './approval-book';
import { type CompactionRequests, compactIfNeeded } from './compaction';
import type { EventLog } from './event-log';
import type { RunControl } from './run-control';
import { runSubAgent } from './sub-agent';
import { notStartedResults, runToolCalls } from './tool-fan-out';
import type { Transcript } from './transcript';

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
}

const STEERED = 'interrupted: the user steered the conversation before it finished';
const ABORTED = 'interrupted: the run was aborted';

/**
 * One run: the model is called, the tools it asks for run in parallel, their results go back to
 * the model, until it answers without tool calls or `maxToolIterations` model calls asked for tools.
 * A steering message interrupts the turn's tools and joins the transcript after their results; an
 * abort stops the run wherever it is. Every tool call the model made gets a result either way.
 */
export async function runTurnLoop(context: RunContext, messages: UserMessage[]): Promise<void> {
  const { run, transcript, events, options, control } = context;
  const messageIds = messages.map((message) => message.messageId);
  transcript.append(...messages);
  events.record(run, { type: 'run_started', messageIds });
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
  let ownersRun = messages.every((message) => isOwner(message.sender, options.owners));
  const applySteering = (interrupted: string[]) => {
    const steering = control.takeSteering();
    ownersRun &&= steering.every((message) => isOwner(message.sender, options.owners));
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
  for (const message of policy.warnings) events.record(run, { type: 'warning', message });
  const offered = policy.tools;
  const offeredToModel = () => (ownersRun ? offered : offered.filter((name) => !tools.get(name)!.ownerOnly));

  for (let iteration = 1; ; iteration++) {
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
    const delta = transcript.deltaForModel(context.conversationId);
    let reply: AssistantMessage;
    try {
      reply = await modelActivities.callModel({
        transcript: delta,
        toolNames: offeredToModel(),
        model: options.model,
        systemPrompt: options.systemPrompt,
      });
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
    const results = control.hasSteering
      ? notStartedResults(calls, STEERED)
      : await control.runTools(() =>
          runToolCalls(calls, {
            conversationId: context.conversationId,
            run,
            workspace: options.workspace,
            agentId: options.agentId,
            execSecurity: options.execSecurity,
            tools: new Map(offered.map((name) => [name, tools.get(name)!])),
            senderIsOwner: ownersRun,
            events,
            approvals: context.approvals,
            approvalSettings: options.approval,
            interruption: () => (control.aborted ? ABORTED : STEERED),
            spawnSubAgent: (call, args) =>
              runSubAgent(call, args, { conversationId: context.conversationId, run, options, events }),
          }),
        );
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

export async function lookUpTools(): Promise<ReadonlyMap<string, ToolDescriptor>> {
  // Parsed so descriptors recorded by older workers get today's defaults (no risk recorded: never asks).
  const descriptors = (await catalogActivities.listTools()).map((descriptor) =>
    ToolDescriptorSchema.parse(descriptor),
  );
  return new Map(descriptors.map((descriptor) => [descriptor.name, descriptor]));
}

function failureMessage(error: unknown): string {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (cause instanceof ApplicationFailure) return cause.message;
  if (cause instanceof Error) return cause.message;
  return String(cause);
}
