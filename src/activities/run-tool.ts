import { ApplicationFailure, CompleteAsyncError, Context } from '@temporalio/activity';
import { z } from 'zod';
import { DEFAULT_AGENT_ID } from '../shared/agent-id';
import {
  METRIC,
  recordCircuitState,
  recordCount,
  recordToolCall,
  toolCallOutcomeLabel,
} from '../shared/agent-metrics';
import { type ToolOutcome, blockedOutcome, errorOutcome } from '../shared/tool-outcome';
import type { ActivityProgress, ToolRunInput } from '../shared/tool-run';
import { ToolCircuitBreakers } from '../tools/circuit-breaker';
import { type CircuitVerdict, CircuitGuard, type RanCall } from '../tools/circuit-guard';
import {
  type ToolResultFinisher,
  cleanErrorMessage,
  createToolResultFinisher,
  parseToolResult,
} from '../tools/finish-tool-result';
import { normalizeToolArguments } from '../tools/param-normalization';
import type { ToolRegistry } from '../tools/registry';
import { runAfterToolCall, runBeforeToolCall } from '../tools/run-tool-hooks';
import { type AgentTool, type ToolContext, type ToolUpdate, runsOnWorker } from '../tools/tool';
import { ToolError } from '../tools/tool-error';
import type { ToolCallInfo, ToolHooks } from '../tools/tool-hooks';
import { truncateText } from '../tools/truncate';
import { Workspace } from '../tools/workspace';
import { Heartbeater } from './heartbeater';
import {
  type ActivityStop,
  type LocalCancelRequests,
  processLocalCancelRequests,
} from './local-cancel-requests';

export interface ToolDeps {
  tools: ToolRegistry;
  /** Used when a conversation names no workspace of its own. */
  defaultWorkspace: string;
  /** Lifecycle hooks around every tool call, run in this order. */
  hooks?: readonly ToolHooks[];
  /** This worker's circuit breakers; by default each tool opens after 5 failures in a row for a minute. */
  circuitBreakers?: ToolCircuitBreakers;
  /** Cancel requests of workflows in this process, seen before the next heartbeat brings them. */
  cancelRequests?: LocalCancelRequests;
}

/** What every call on this worker shares: the registry, hooks, finishing steps, breakers, workspaces. */
interface Worker {
  deps: ToolDeps;
  hooks: readonly ToolHooks[];
  finisher: ToolResultFinisher;
  guard: CircuitGuard;
  cancelRequests: LocalCancelRequests;
  workspaceFor: (root: string) => Workspace;
}

/** One call on its way: what prepare found, carried through authorise and execute. */
interface PreparedCall {
  input: ToolRunInput;
  info: ToolCallInfo;
  tool: AgentTool;
  /** The arguments as the tool declares them (normalised, validated, maybe rewritten by a hook). */
  params: Record<string, unknown>;
  workspace: Workspace;
  context: Context;
  /** How the activity is being stopped, if it is: steer or abort, a timeout, a shutdown. */
  stop: ActivityStop;
  heartbeater: Heartbeater<ActivityProgress>;
}

/** What a step gives: the call goes on, or its outcome is already known (an error, a refusal). */
type Preparation = { kind: 'immediate'; outcome: ToolOutcome } | { kind: 'prepared'; call: PreparedCall };

const PROGRESS_TEXT_BYTES = 4_096;

export function createRunTool(deps: ToolDeps): (input: ToolRunInput) => Promise<ToolOutcome> {
  const workspaces = new Map<string, Workspace>();
  const worker: Worker = {
    deps,
    hooks: deps.hooks ?? [],
    finisher: createToolResultFinisher(deps.hooks ?? []),
    guard: new CircuitGuard(deps.circuitBreakers ?? new ToolCircuitBreakers()),
    cancelRequests: deps.cancelRequests ?? processLocalCancelRequests,
    workspaceFor(root) {
      let workspace = workspaces.get(root);
      if (!workspace) {
        workspace = new Workspace(root);
        workspaces.set(root, workspace);
      }
      return workspace;
    },
  };
  return (input) => runTool(worker, input);
}

/**
 * Runs one tool call through the stages every call passes: prepare (arguments normalised and
 * validated, the workspace opened, the circuit breaker asked), authorise (the before_tool_call
 * hooks), execute (the tool under its breaker, then the after_tool_call hooks), finish (the same
 * steps for every result, see finish-tool-result.ts). Everything the model should read comes back as
 * an outcome, errors included; only an unexpected throw, or a retryable error of a read-only tool
 * with attempts left, fails the activity.
 */
async function runTool(worker: Worker, input: ToolRunInput): Promise<ToolOutcome> {
  const info: ToolCallInfo = {
    toolName: input.toolName,
    toolCallId: input.toolCallId,
    conversationId: input.conversationId,
  };
  const startedAt = Date.now();
  const meter = Context.current().metricMeter;
  if (Context.current().info.attempt > 1) recordCount(meter, METRIC.toolRetries, { tool: input.toolName });
  try {
    const outcome = await worker.finisher.finish(info, await outcomeOf(worker, input, info));
    recordToolCall(meter, input.toolName, toolCallOutcomeLabel(outcome), Date.now() - startedAt);
    return outcome;
  } catch (error) {
    if (!(error instanceof CompleteAsyncError)) {
      recordToolCall(meter, input.toolName, 'failed', Date.now() - startedAt);
    }
    throw error;
  }
}

async function outcomeOf(worker: Worker, input: ToolRunInput, info: ToolCallInfo): Promise<ToolOutcome> {
  const prepared = await prepare(worker, input, info);
  if (prepared.kind === 'immediate') return prepared.outcome;
  const { call } = prepared;
  try {
    const authorised = await authorise(worker, call);
    if (authorised.kind === 'immediate') {
      worker.guard.notRun(input.toolName);
      return authorised.outcome;
    }
    return await worker.guard.observe(input.toolName, () => execute(worker, authorised.call), {
      thrown: (error) => verdictOfThrow(error, call.stop, call.context.info.isLocal),
      changed: (state, opened) => recordCircuitState(call.context.metricMeter, input.toolName, state, opened),
    });
  } finally {
    call.stop.release();
    call.heartbeater.stop();
  }
}

/** The tool, its arguments as it declares them, the conversation's workspace, the breaker's leave; or why not. */
async function prepare(worker: Worker, input: ToolRunInput, info: ToolCallInfo): Promise<Preparation> {
  const { toolName } = input;
  const { tools } = worker.deps;
  await tools.ensure([toolName]);
  const tool = tools.get(toolName);
  if (!tool) return immediateError(toolName, 'NotFound', `Tool not found: ${toolName}`);
  if (!runsOnWorker(tool)) {
    return immediateError(
      toolName,
      'ExecutionFailed',
      `${toolName} runs in the conversation workflow, not on a worker`,
    );
  }
  const normalized = normalizeToolArguments(
    input.arguments,
    tools.parameters(toolName) ?? {},
    new Set(tool.verbatimParameters),
  );
  if (!normalized.ok) return immediateError(toolName, 'InvalidArgs', normalized.error);
  const valid = validate(tool, normalized.params);
  if (!valid.ok) return immediateError(toolName, 'InvalidArgs', valid.error);
  let workspace: Workspace;
  try {
    workspace = worker.workspaceFor(input.workspace ?? worker.deps.defaultWorkspace);
  } catch (error) {
    return immediateError(
      toolName,
      'InvalidPath',
      `the conversation's workspace is unusable: ${messageOf(error)}`,
    );
  }
  const admission = worker.guard.admit(toolName);
  if (!admission.run) return { kind: 'immediate', outcome: admission.outcome };
  const context = Context.current();
  return {
    kind: 'prepared',
    call: {
      input,
      info,
      tool,
      params: valid.params,
      workspace,
      context,
      stop: worker.cancelRequests.watch(context),
      heartbeater: new Heartbeater<ActivityProgress>(context, {
        kind: 'tool',
        toolCallId: input.toolCallId,
        toolName,
      }),
    },
  };
}

/** The before_tool_call hooks: they may block the call or rewrite its arguments (checked again); a failing one fails closed. */
async function authorise(worker: Worker, call: PreparedCall): Promise<Preparation> {
  if (!worker.hooks.length) return { kind: 'prepared', call };
  const { toolName } = call.info;
  let decision;
  try {
    decision = await runBeforeToolCall(worker.hooks, { ...call.info, params: call.params });
  } catch (error) {
    return immediateError(
      toolName,
      'ExecutionFailed',
      `a before_tool_call hook failed, so the tool did not run: ${messageOf(error)}`,
    );
  }
  if (!decision.run) return { kind: 'immediate', outcome: blockedOutcome(toolName, 'hook', decision.reason) };
  if (decision.params === call.params) return { kind: 'prepared', call };
  const valid = validate(call.tool, decision.params);
  if (!valid.ok)
    return immediateError(toolName, 'InvalidArgs', `a before_tool_call hook gave ${valid.error}`);
  return { kind: 'prepared', call: { ...call, params: valid.params } };
}

/**
 * The tool itself, then the after_tool_call hooks. A ToolError is the model's answer unless a
 * read-only tool may try again; a steer or abort keeps what the tool returned; any other throw
 * fails the attempt.
 */
async function execute(worker: Worker, call: PreparedCall): Promise<RanCall> {
  const { input, tool, context, stop } = call;
  const { toolName } = input;
  const startedAt = Date.now();
  let ran: RanCall | undefined;
  let failure: unknown;
  try {
    const result = await tool.execute(
      input.toolCallId,
      call.params,
      stop.signal,
      (update: ToolUpdate) => call.heartbeater.update(progressOf(input, update)),
      toolContextOf(call),
    );
    const stopped = stoppedBy(stop);
    if (stopped === 'other') throw context.cancellationSignal.reason;
    ran = await shaped(worker, toolName, result, stopped === 'cancel_requested');
  } catch (error) {
    // The tool handed the call over (RAP): whoever holds the task token completes the activity.
    if (error instanceof CompleteAsyncError) throw error;
    failure = error;
    if (error instanceof ToolError && !stop.signal.aborted) {
      const message = cleanErrorMessage(error.message);
      ran = { outcome: errorOutcome(toolName, error.kind, message), message };
    }
  }

  if (worker.hooks.length) {
    const observed = ran?.outcome ?? errorOutcome(toolName, 'ExecutionFailed', messageOf(failure));
    await runAfterToolCall(
      worker.hooks,
      {
        ...call.info,
        params: call.params,
        result: { content: observed.content, details: observed.details },
        isError: observed.isError,
        durationMs: Date.now() - startedAt,
      },
      (message) => context.log.warn(message),
    );
  }

  if (failure === undefined) return ran!;
  if (stop.signal.aborted) {
    // Reported as cancelled only once the SDK has the request too (its next heartbeat).
    await stop.sdkCancellation();
    throw context.cancellationSignal.reason ?? failure;
  }
  if (failure instanceof ToolError) {
    const attempts = worker.deps.tools.descriptor(toolName)?.retry.maximumAttempts ?? 1;
    // Read-only tools try again while attempts last; the last attempt's error is the answer.
    if (tool.idempotent && failure.retryable && context.info.attempt < attempts) {
      throw ApplicationFailure.create({ message: failure.message, type: failure.kind, nonRetryable: false });
    }
    return ran!;
  }
  throw ApplicationFailure.create({
    message: messageOf(failure),
    type: 'ExecutionFailed',
    nonRetryable: !tool.idempotent,
  });
}

/** The tool's own result as the model reads it; one that is no result at all is an error of the tool. */
async function shaped(
  worker: Worker,
  toolName: string,
  result: unknown,
  interrupted: boolean,
): Promise<RanCall> {
  const parsed = parseToolResult(result);
  if (!parsed.ok)
    return { outcome: errorOutcome(toolName, 'ExecutionFailed', parsed.error), message: parsed.error };
  return { outcome: await worker.finisher.shape(toolName, parsed.result, { interrupted }) };
}

/**
 * What a throw from a running call says about its tool: an activity timing out or an unexpected
 * error counts against it; a cancel (steer, abort, shutdown) or a hand-over says nothing.
 */
function verdictOfThrow(error: unknown, stop: ActivityStop, local: boolean): CircuitVerdict {
  if (error instanceof CompleteAsyncError || stop.cancelRequested) return { kind: 'silent' };
  // A local attempt stopped at its bound is handed to an activity: the tool has not failed.
  if (stop.timedOut) return local ? { kind: 'silent' } : { kind: 'fails', why: 'timed out' };
  if (stop.signal.aborted) return { kind: 'silent' };
  return { kind: 'fails', why: messageOf(error) };
}

/**
 * Why the activity's signal fired, if it did. Only a cancel request from the workflow (steer, abort)
 * lets a partial result through; on a timeout or a worker shutdown the attempt fails as usual.
 */
function stoppedBy(stop: ActivityStop): 'cancel_requested' | 'other' | undefined {
  if (!stop.signal.aborted) return undefined;
  return stop.cancelRequested ? 'cancel_requested' : 'other';
}

function validate(
  tool: AgentTool,
  params: Record<string, unknown>,
): { ok: true; params: Record<string, unknown> } | { ok: false; error: string } {
  const parsed = tool.parameters.safeParse(params);
  if (!parsed.success) return { ok: false, error: `invalid arguments: ${z.prettifyError(parsed.error)}` };
  return { ok: true, params: parsed.data as Record<string, unknown> };
}

function immediateError(
  toolName: string,
  kind: Parameters<typeof errorOutcome>[1],
  message: string,
): Preparation {
  return { kind: 'immediate', outcome: errorOutcome(toolName, kind, cleanErrorMessage(message)) };
}

function toolContextOf({ input, workspace, stop }: PreparedCall): ToolContext {
  return {
    workspace,
    stopRequested: () => stop.cancelRequested,
    conversationId: input.conversationId,
    agentId: input.agentId ?? DEFAULT_AGENT_ID,
    ...(input.execSecurity ? { execSecurity: input.execSecurity } : {}),
    ...(input.ancestors?.length ? { ancestors: input.ancestors } : {}),
    ...(input.userId !== undefined ? { userId: input.userId } : {}),
  };
}

function progressOf(input: ToolRunInput, update: ToolUpdate): ActivityProgress {
  const text = update.content?.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n');
  return {
    kind: 'tool',
    toolCallId: input.toolCallId,
    toolName: input.toolName,
    ...(text !== undefined ? { text: truncateText(text, PROGRESS_TEXT_BYTES) } : {}),
    ...(update.details !== undefined ? { details: update.details } : {}),
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
