import type { MetricMeter } from '@temporalio/common';
import type { ToolOutcomeFields } from './tool-outcome';

/**
 * The runtime's own metrics, recorded through Temporal's metric meter so they leave the worker with
 * the SDK's (a Prometheus endpoint with `--metrics-port`, where counters end in `_total`). Durations
 * are milliseconds. Tool activities record from the worker, approvals from the
 * workflow (whose meter stays silent during replay), model calls from the model activity.
 */
export const METRIC = {
  /** Tool calls by `tool` and `outcome`: ok, error (an error result), blocked (a hook refused it), aborted, unavailable (circuit open), failed (the activity failed). */
  toolCalls: 'durable_agent_tool_calls',
  toolDuration: 'durable_agent_tool_duration',
  /** Tool activities that timed out, by `tool`, as the workflow saw them. */
  toolTimeouts: 'durable_agent_tool_timeouts',
  /** Tool attempts after the first, by `tool`. */
  toolRetries: 'durable_agent_tool_retries',
  /** Circuit breaker state by `tool`: 0 closed, 1 open, 2 half-open (one trial call running). */
  toolCircuitState: 'durable_agent_tool_circuit_state',
  toolCircuitOpened: 'durable_agent_tool_circuit_opened',
  /** By `tool`. */
  approvalsRequested: 'durable_agent_approvals_requested',
  /** By `tool` and `decision`: approved, rejected, expired, aborted. */
  approvalsDecided: 'durable_agent_approvals_decided',
  approvalWait: 'durable_agent_approval_wait',
  /** Under an approval policy, by `tool`: requests offered to their escalation group, and those its expiry rejected. */
  approvalsEscalated: 'durable_agent_approvals_escalated',
  approvalsExpired: 'durable_agent_approvals_expired',
  /** Tokens the endpoint reported per finished run, by `outcome`; a budget pause counts as an approval of tool `budget`. */
  runTokens: 'durable_agent_run_tokens',
  /** Runs stopped at their budget, by `budget` (tokens, toolCalls, deadlineMs, dailyTokens). */
  budgetStops: 'durable_agent_budget_stops',
  /** Model calls by `model` and `outcome` (ok, error). */
  modelCalls: 'durable_agent_model_calls',
  modelLatency: 'durable_agent_model_latency',
  modelTimeToFirstToken: 'durable_agent_model_time_to_first_token',
  /**
   * Tokens by `model` and `direction` (input, output, as the endpoint reported them; and
   * cached_input and reasoning, the parts of input and output the provider said were cached or reasoning).
   */
  modelTokens: 'durable_agent_model_tokens',
  /** Millionths of a US dollar by `model`, priced by the worker's table (AGENT_MODEL_PRICES); counters are whole numbers. */
  modelCost: 'durable_agent_model_cost_micro_usd',
  /** Failed model calls by `model` and `kind` (rejected, unavailable, cancelled, other). */
  modelErrors: 'durable_agent_model_errors',
  /** With fleet model limits: how long a model call waited for its lease, by `endpoint`. */
  modelLeaseWait: 'durable_agent_model_lease_wait',
  /** With fleet model limits: 429s reported to the limiter, each pausing the fleet's calls, by `endpoint`. */
  modelThrottles: 'durable_agent_model_throttles',
} as const;

export type ToolCallOutcome = 'ok' | 'error' | 'blocked' | 'aborted' | 'unavailable' | 'failed';

/** The `outcome` label of a tool call that gave an outcome, from its fields. */
export function toolCallOutcomeLabel(fields: ToolOutcomeFields): ToolCallOutcome {
  if (fields.status === 'error') return fields.errorKind === 'Unavailable' ? 'unavailable' : 'error';
  return fields.status;
}

export const CIRCUIT_STATE_VALUE = { closed: 0, open: 1, half_open: 2 } as const;

/** A tool's circuit breaker changed state on this worker: the gauge follows, and an opening is counted. */
export function recordCircuitState(
  meter: MetricMeter,
  tool: string,
  state: keyof typeof CIRCUIT_STATE_VALUE,
  opened: boolean,
): void {
  meter.createGauge(METRIC.toolCircuitState).set(CIRCUIT_STATE_VALUE[state], { tool });
  if (opened) recordCount(meter, METRIC.toolCircuitOpened, { tool });
}

export function recordToolCall(
  meter: MetricMeter,
  tool: string,
  outcome: ToolCallOutcome,
  durationMs: number,
): void {
  meter.createCounter(METRIC.toolCalls, 'calls').add(1, { tool, outcome });
  meter
    .createHistogram(METRIC.toolDuration, 'int', 'ms')
    .record(Math.max(0, Math.round(durationMs)), { tool, outcome });
}

export function recordCount(meter: MetricMeter, name: string, tags: Record<string, string>, by = 1): void {
  meter.createCounter(name).add(by, tags);
}

export function recordModelCall(
  meter: MetricMeter,
  model: string,
  call: {
    latencyMs: number;
    firstTokenMs?: number;
    inputTokens?: number;
    outputTokens?: number;
    cachedInputTokens?: number;
    reasoningTokens?: number;
    errorKind?: string;
  },
): void {
  meter.createCounter(METRIC.modelCalls, 'calls').add(1, { model, outcome: call.errorKind ? 'error' : 'ok' });
  meter.createHistogram(METRIC.modelLatency, 'int', 'ms').record(Math.round(call.latencyMs), { model });
  if (call.firstTokenMs !== undefined) {
    meter
      .createHistogram(METRIC.modelTimeToFirstToken, 'int', 'ms')
      .record(Math.round(call.firstTokenMs), { model });
  }
  if (call.inputTokens)
    meter.createCounter(METRIC.modelTokens, 'tokens').add(call.inputTokens, { model, direction: 'input' });
  if (call.outputTokens)
    meter.createCounter(METRIC.modelTokens, 'tokens').add(call.outputTokens, { model, direction: 'output' });
  if (call.cachedInputTokens)
    meter
      .createCounter(METRIC.modelTokens, 'tokens')
      .add(call.cachedInputTokens, { model, direction: 'cached_input' });
  if (call.reasoningTokens)
    meter
      .createCounter(METRIC.modelTokens, 'tokens')
      .add(call.reasoningTokens, { model, direction: 'reasoning' });
  if (call.errorKind)
    meter.createCounter(METRIC.modelErrors, 'errors').add(1, { model, kind: call.errorKind });
}

/** What a model call cost, when the worker priced it. */
export function recordModelCost(meter: MetricMeter, model: string, usd: number | undefined): void {
  const micro = Math.round((usd ?? 0) * 1_000_000);
  if (micro > 0) meter.createCounter(METRIC.modelCost, 'micro_usd').add(micro, { model });
}
