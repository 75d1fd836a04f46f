import { ApplicationFailure, CompleteAsyncError, Context } from '@temporalio/activity';
import { z } from 'zod';
import { DEFAULT_AGENT_ID } from '../shared/agent-id';
import {
  type ToolErrorKind,
  type ToolOutcome,
  toolBlockedOutcome,
  toolErrorOutcome,
} from '../shared/tool-errors';
import type { ActivityProgress, ToolRunInput } from '../shared/tool-run';
import { normalizeToolArguments } from '../tools/param-normalization';
import type { ToolRegistry } from '../tools/registry';
import { type AgentTool, type ToolUpdate, runsOnWorker } from '../tools/tool';
import { ToolError } from '../tools/tool-error';
import { truncateText } from '../tools/truncate';
import { Workspace } from '../tools/workspace';
import { createToolResultFinisher, toolErrorResult } from '../tools/finish-tool-result';
import { Heartbeater } from './heartbeater';
import {
  type ActivityStop,
  type LocalCancelRequests,
  processLocalCancelRequests,
} from './local-cancel-requests';
import { runAfterToolCall, runBeforeToolCall } from '../tools/run-tool-hooks';
import type { ToolCallInfo, ToolHooks } from '../tools/tool-hooks';
import { ToolCircuitBreakers } from '../tools/circuit-breaker';
import { toolDisabledText } from '../shared/tool-disabled';
import {
  CIRCUIT_STATE_VALUE,
  METRIC,
  type ToolCallOutcome,
  recordCount,
  recordToolCall,
} from '../shared/agent-metrics';

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

/** Error kinds that say something is wrong with the tool rather than with the call the model made. */
const TOOL_FAULT_KINDS: ReadonlySet<string> = new Set<ToolErrorKind>(['ExecutionFailed', 'Timeout']);

const PROGRESS_TEXT_BYTES = 4_096;

/**
 * Why the activity's signal fired, if it did. Only a cancel request from the workflow (steer, abort)
 * lets a partial result through; on a timeout or a worker shutdown the attempt fails as usual.
 */
function stoppedBy(stop: ActivityStop): 'cancel_requested' | 'other' | undefined {
  if (!stop.signal.aborted) return undefined;
  return stop.cancelRequested ? 'cancel_requested' : 'other';
}

type Validated = { ok: true; params: Record<string, unknown> } | { ok: false; error: string };

/** A call ready to run: the tool, its checked arguments, the opened workspace. */
interface Prepared {
  tool: AgentTool;
  params: Record<string, unknown>;
  workspace: Workspace;
}

function isOutcome(value: Prepared | ToolOutcome): value is ToolOutcome {
  return 'content' in value;
}

function validate(tool: AgentTool, params: Record<string, unknown>): Validated {
  const parsed = tool.parameters.safeParse(params);
  if (!parsed.success) return { ok: false, error: `invalid arguments: ${z.prettifyError(parsed.error)}` };
  return { ok: true, params: parsed.data as Record<string, unknown> };
}

export function createRunTool(deps: ToolDeps) {
  const hooks = deps.hooks ?? [];
  const finisher = createToolResultFinisher(hooks);
  const breakers = deps.circuitBreakers ?? new ToolCircuitBreakers();
  const cancelRequests = deps.cancelRequests ?? processLocalCancelRequests;
  const workspaces = new Map<string, Workspace>();
  const workspaceFor = (root: string) => {
    let workspace = workspaces.get(root);
    if (!workspace) {
      workspace = new Workspace(root);
      workspaces.set(root, workspace);
    }
    return workspace;
  };

  /**
   * Runs one tool call through the stages every call passes: prepare (arguments normalised and
   * validated, the workspace opened), authorise (the before_tool_call hooks), execute (the tool, then
   * the after_tool_call hooks), finish (the same steps for every result, see finish-tool-result.ts).
   * Everything the model should read comes back as an outcome, errors included; only an unexpected
   * throw, or a retryable error of a read-only tool with attempts left, fails the activity.
   */
  return async function runTool(input: ToolRunInput): Promise<ToolOutcome> {
    const call: ToolCallInfo = {
      toolName: input.toolName,
      toolCallId: input.toolCallId,
      conversationId: input.conversationId,
    };
    const startedAt = Date.now();
    const meter = Context.current().metricMeter;
    if (Context.current().info.attempt > 1) recordCount(meter, METRIC.toolRetries, { tool: input.toolName });
    try {
      const outcome = await finisher.finish(call, await prepareAndRun(input, call));
      recordToolCall(meter, input.toolName, outcomeLabel(outcome), Date.now() - startedAt);
      return outcome;
    } catch (error) {
      if (!(error instanceof CompleteAsyncError)) {
        recordToolCall(meter, input.toolName, 'failed', Date.now() - startedAt);
      }
      throw error;
    }
  };

  async function prepareAndRun(input: ToolRunInput, call: ToolCallInfo): Promise<ToolOutcome> {
    const prepared = await prepare(input);
    if (isOutcome(prepared)) return prepared;
    const context = Context.current();
    const admission = breakers.admit(input.toolName);
    if (!admission.run) return unavailableOutcome(input.toolName, admission);
    const heartbeater = new Heartbeater<ActivityProgress>(context, {
      kind: 'tool',
      toolCallId: input.toolCallId,
      toolName: input.toolName,
    });
    const stop = cancelRequests.watch(context);
    try {
      const authorised = await authorise(call, prepared);
      if (isOutcome(authorised)) {
        breakers.released(input.toolName);
        return authorised;
      }
      return await observedByBreaker(input.toolName, context, stop, () =>
        execute(authorised.tool, input, authorised.params, authorised.workspace, context, stop, heartbeater),
      );
    } finally {
      stop.release();
      heartbeater.stop();
    }
  }

  /**
   * Tells the tool's circuit breaker how the call went: failures of the tool itself count (an
   * execution failure or timeout, an unexpected throw, the activity timing out); a result, an error
   * the call caused, or a cancel says the tool works or says nothing.
   */
  async function observedByBreaker(
    toolName: string,
    context: Context,
    stop: ActivityStop,
    run: () => Promise<ToolOutcome>,
  ): Promise<ToolOutcome> {
    const before = breakers.state(toolName);
    try {
      const outcome = await run();
      const kind = errorKindOf(outcome);
      if (kind && TOOL_FAULT_KINDS.has(kind)) breakers.failed(toolName, failureText(outcome));
      else if (outcome.aborted) breakers.released(toolName);
      else breakers.succeeded(toolName);
      return outcome;
    } catch (error) {
      if (error instanceof CompleteAsyncError || stop.cancelRequested) {
        breakers.released(toolName);
      } else if (stop.timedOut) {
        breakers.failed(toolName, 'timed out');
      } else if (stop.signal.aborted) {
        breakers.released(toolName);
      } else {
        breakers.failed(toolName, truncateText(messageOf(error), 300));
      }
      throw error;
    } finally {
      const after = breakers.state(toolName);
      if (after !== before) {
        context.metricMeter
          .createGauge(METRIC.toolCircuitState)
          .set(CIRCUIT_STATE_VALUE[after], { tool: toolName });
        if (after === 'open') recordCount(context.metricMeter, METRIC.toolCircuitOpened, { tool: toolName });
      }
    }
  }

  /** The tool, its arguments as it declares them, and the conversation's workspace; or why not. */
  async function prepare(input: ToolRunInput): Promise<Prepared | ToolOutcome> {
    const { toolName } = input;
    await deps.tools.ensure([toolName]);
    const tool = deps.tools.get(toolName);
    if (!tool) return errorOutcome(toolName, 'NotFound', `Tool not found: ${toolName}`);
    if (!runsOnWorker(tool)) {
      return errorOutcome(
        toolName,
        'ExecutionFailed',
        `${toolName} runs in the conversation workflow, not on a worker`,
      );
    }
    const normalized = normalizeToolArguments(
      input.arguments,
      deps.tools.parameters(toolName) ?? {},
      new Set(tool.verbatimParameters),
    );
    if (!normalized.ok) return errorOutcome(toolName, 'InvalidArgs', normalized.error);
    const valid = validate(tool, normalized.params);
    if (!valid.ok) return errorOutcome(toolName, 'InvalidArgs', valid.error);
    try {
      return {
        tool,
        params: valid.params,
        workspace: workspaceFor(input.workspace ?? deps.defaultWorkspace),
      };
    } catch (error) {
      return errorOutcome(
        toolName,
        'InvalidPath',
        `the conversation's workspace is unusable: ${(error as Error).message}`,
      );
    }
  }

  /** The before_tool_call hooks: they may block the call or rewrite its arguments (checked again); a failing one fails closed. */
  async function authorise(call: ToolCallInfo, prepared: Prepared): Promise<Prepared | ToolOutcome> {
    if (!hooks.length) return prepared;
    const { toolName } = call;
    let decision;
    try {
      decision = await runBeforeToolCall(hooks, { ...call, params: prepared.params });
    } catch (error) {
      return errorOutcome(
        toolName,
        'ExecutionFailed',
        `a before_tool_call hook failed, so the tool did not run: ${messageOf(error)}`,
      );
    }
    if (!decision.run) return toolBlockedOutcome(toolName, decision.reason);
    if (decision.params === prepared.params) return prepared;
    const valid = validate(prepared.tool, decision.params);
    if (!valid.ok)
      return errorOutcome(toolName, 'InvalidArgs', `a before_tool_call hook gave ${valid.error}`);
    return { ...prepared, params: valid.params };
  }

  async function execute(
    tool: AgentTool,
    input: ToolRunInput,
    params: Record<string, unknown>,
    workspace: Workspace,
    context: Context,
    stop: ActivityStop,
    heartbeater: Heartbeater<ActivityProgress>,
  ): Promise<ToolOutcome> {
    const { toolName } = input;
    const onUpdate = (update: ToolUpdate) => heartbeater.update(progressOf(input, update));
    const startedAt = Date.now();
    let outcome: ToolOutcome | undefined;
    let failure: unknown;
    try {
      const result = await tool.execute(input.toolCallId, params, stop.signal, onUpdate, {
        workspace,
        conversationId: input.conversationId,
        agentId: input.agentId ?? DEFAULT_AGENT_ID,
        ...(input.execSecurity ? { execSecurity: input.execSecurity } : {}),
        ...(input.ancestors?.length ? { ancestors: input.ancestors } : {}),
        ...(input.userId !== undefined ? { userId: input.userId } : {}),
      });
      const aborted = stoppedBy(stop);
      if (aborted === 'other') throw context.cancellationSignal.reason;
      outcome = await finisher.shape(toolName, result, { interrupted: aborted === 'cancel_requested' });
    } catch (error) {
      // The tool handed the call over (RAP): whoever holds the task token completes the activity.
      if (error instanceof CompleteAsyncError) throw error;
      failure = error;
      if (error instanceof ToolError && !stop.signal.aborted) {
        outcome = errorOutcome(toolName, error.kind, error.message);
      }
    }

    if (hooks.length) {
      const observed = outcome ?? toolErrorOutcome(toolName, 'ExecutionFailed', messageOf(failure));
      await runAfterToolCall(
        hooks,
        {
          toolName,
          toolCallId: input.toolCallId,
          conversationId: input.conversationId,
          params,
          result: { content: observed.content, details: observed.details },
          isError: observed.isError,
          durationMs: Date.now() - startedAt,
        },
        (message) => context.log.warn(message),
      );
    }

    if (failure === undefined) return outcome!;
    if (stop.signal.aborted) {
      // Reported as cancelled only once the SDK has the request too (its next heartbeat).
      await stop.sdkCancellation();
      throw context.cancellationSignal.reason ?? failure;
    }
    if (failure instanceof ToolError) {
      const attempts = deps.tools.descriptor(toolName)?.retry.maximumAttempts ?? 1;
      // Read-only tools try again while attempts last; the last attempt's error is the answer.
      if (tool.idempotent && failure.retryable && context.info.attempt < attempts) {
        throw ApplicationFailure.create({
          message: failure.message,
          type: failure.kind,
          nonRetryable: false,
        });
      }
      return outcome!;
    }
    throw ApplicationFailure.create({
      message: messageOf(failure),
      type: 'ExecutionFailed',
      nonRetryable: !tool.idempotent,
    });
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function errorKindOf(outcome: ToolOutcome): string | undefined {
  if (!outcome.isError || typeof outcome.details !== 'object' || outcome.details === null) return undefined;
  const kind = (outcome.details as { errorKind?: unknown }).errorKind;
  return typeof kind === 'string' ? kind : undefined;
}

/** The error message of an error result, shortened for the notice an open circuit gives. */
function failureText(outcome: ToolOutcome): string {
  const block = outcome.content.find((part) => part.type === 'text');
  if (block?.type !== 'text') return 'an error result';
  try {
    const envelope = JSON.parse(block.text) as { error?: unknown };
    if (typeof envelope.error === 'string') return truncateText(envelope.error, 300);
  } catch {
    // not the error envelope: the text itself
  }
  return truncateText(block.text, 300);
}

function outcomeLabel(outcome: ToolOutcome): ToolCallOutcome {
  if (outcome.aborted) return 'aborted';
  if (!outcome.isError) return 'ok';
  return errorKindOf(outcome) === 'Unavailable' ? 'unavailable' : 'error';
}

/** What the model reads while a tool's circuit is open: which tool, why, and when to try again. */
function unavailableOutcome(
  tool: string,
  refused: { retryAtMs: number; failures: number; lastFailure: string },
): ToolOutcome {
  const retryAt = new Date(refused.retryAtMs).toISOString();
  const outcome = errorOutcome(
    tool,
    'Unavailable',
    toolDisabledText({
      tool,
      retryAt,
      nowMs: Date.now(),
      failures: refused.failures,
      lastFailure: refused.lastFailure,
    }),
  );
  return { ...outcome, details: { errorKind: 'Unavailable', circuit: { state: 'open', retryAt } } };
}

function errorOutcome(tool: string, kind: ToolErrorKind, message: string): ToolOutcome {
  return toolErrorResult(tool, message, kind);
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
