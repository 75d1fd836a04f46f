import { ApplicationFailure, Context } from '@temporalio/activity';
import { type LiveModelText, modelCallKey } from '../../client/live-model-text';
import type { AssistantMessage } from '../../shared/messages';
import { DEFAULT_MODEL_STREAM_TIMEOUTS, type ModelStreamTimeouts } from '../../shared/model-stream-timeouts';
import { type ActivityProgress, MODEL_PROGRESS_TAIL_CHARS } from '../../shared/tool-run';
import { recordModelCall } from '../../shared/agent-metrics';
import { Heartbeater } from '../heartbeater';
import type { LiveModelCalls } from '../live-model-calls';
import type { HeldModelLease, ModelLimiter } from '../model-lease';
import { withModelCallSpan } from './model-call-span';
import { classifyModelError, modelErrorKind, rateLimitOf } from './model-failures';
import type { ModelWire, WireRequest } from './model-wire';

/**
 * One streamed model call inside a model activity, through whichever wire: the end of the partial
 * answer heartbeated as it arrives (so watchers elsewhere see it and a dead worker is noticed),
 * every piece of text handed to `live` at once for watchers in this process, cancelled with the
 * activity, and failures classified (retryable or not) by what the wire says they mean.
 */
export function streamedModelCall(
  wire: ModelWire,
  request: WireRequest,
  options: StreamOptions = {},
): Promise<AssistantMessage> {
  return withModelCallSpan(wire, request.model, () => streamOnce(wire, request, options));
}

export interface StreamOptions {
  live?: LiveModelText;
  /** This process's push endpoint's registry: watchers elsewhere read the text there as it arrives. */
  liveCalls?: LiveModelCalls;
  /** DEFAULT_MODEL_STREAM_TIMEOUTS for those left out. */
  timeouts?: Partial<ModelStreamTimeouts>;
  /** The fleet's limits on the endpoint: the call waits for a lease first and tells how it went. */
  limiter?: ModelLimiter;
}

async function streamOnce(
  wire: ModelWire,
  request: WireRequest,
  { live, liveCalls, timeouts: given, limiter }: StreamOptions,
): Promise<AssistantMessage> {
  const { model } = request;
  const context = Context.current();
  const { workflowExecution: execution, activityId, attempt } = context.info;
  const call = execution && modelCallKey(execution.runId, activityId, attempt);
  const tap = execution && call ? liveCalls?.open(execution.workflowId, call) : undefined;
  const liveUrl =
    tap?.url !== undefined ? { live: tap.url, ...(tap.pin !== undefined ? { livePin: tap.pin } : {}) } : {};
  const heartbeater = new Heartbeater<ActivityProgress>(context, {
    kind: 'model',
    text: '',
    textLength: 0,
    toolCalls: 0,
    ...liveUrl,
  });
  // Watchers elsewhere learn where to read the text from the first heartbeat: sent now, before
  // the first token, so they are listening when it comes. One model call at a time per run.
  if (tap?.url !== undefined)
    heartbeater.update({ kind: 'model', text: '', textLength: 0, toolCalls: 0, ...liveUrl });
  let lease: HeldModelLease | undefined;
  try {
    lease = await limiter?.acquire();
  } catch (error) {
    heartbeater.stop();
    tap?.end();
    throw context.cancellationSignal.aborted ? (context.cancellationSignal.reason ?? error) : error;
  }
  let published = 0;
  let tapped = 0;
  const startedAt = Date.now();
  let firstTokenMs: number | undefined;
  const meter = context.metricMeter;
  const timeouts = { ...DEFAULT_MODEL_STREAM_TIMEOUTS, ...given };
  const quiet = new QuietEndpoint();
  quiet.expect(timeouts.firstTokenMs, 'sent no first token');
  try {
    const reply = await wire.open(request)(
      AbortSignal.any([context.cancellationSignal, quiet.signal]),
      (partial) => {
        if (firstTokenMs !== undefined) quiet.heard();
        // Thinking counts as a token: a reasoning model may think for long before its first word.
        else if (partial.text || partial.toolCalls || partial.thinkingLength) {
          firstTokenMs = Date.now() - startedAt;
          quiet.expect(timeouts.idleMs, 'stopped sending');
        }
        if (live && execution && call && partial.text.length > published) {
          live.publish({
            conversationId: execution.workflowId,
            call,
            offset: published,
            text: partial.text.slice(published),
          });
          published = partial.text.length;
        }
        if (tap && partial.text.length > tapped) {
          tap.append(partial.text.slice(tapped));
          tapped = partial.text.length;
        }
        heartbeater.update({
          kind: 'model',
          text: partial.text.slice(-MODEL_PROGRESS_TAIL_CHARS),
          textLength: partial.text.length,
          toolCalls: partial.toolCalls,
          ...liveUrl,
        });
      },
      () => Date.now(),
    );
    // The SDK ends a stream it aborted quietly, as if the endpoint had finished.
    if (quiet.gaveUp) throw new Error(quiet.gaveUp);
    await lease?.release('ok');
    recordModelCall(meter, model, {
      latencyMs: Date.now() - startedAt,
      ...(firstTokenMs !== undefined ? { firstTokenMs } : {}),
      ...(reply.usage
        ? {
            inputTokens: reply.usage.inputTokens,
            outputTokens: reply.usage.outputTokens,
            ...(reply.usage.cachedInputTokens ? { cachedInputTokens: reply.usage.cachedInputTokens } : {}),
            ...(reply.usage.reasoningTokens ? { reasoningTokens: reply.usage.reasoningTokens } : {}),
          }
        : {}),
    });
    return reply;
  } catch (error) {
    const cancelled = context.cancellationSignal.aborted;
    await lease?.release(...leaseOutcomeOf(wire, error));
    recordModelCall(meter, model, {
      latencyMs: Date.now() - startedAt,
      errorKind: cancelled ? 'cancelled' : quiet.gaveUp ? 'timeout' : modelErrorKind(error, wire.failureOf),
    });
    if (cancelled) throw context.cancellationSignal.reason ?? error;
    if (quiet.gaveUp)
      throw ApplicationFailure.retryable(`the model endpoint ${quiet.gaveUp}`, 'ModelTimeout');
    throw classifyModelError(error, wire.failureOf);
  } finally {
    quiet.stop();
    heartbeater.stop();
    tap?.end();
  }
}

/** How a failed call ends its lease: a 429 (with what its Retry-After asked) pauses the fleet's calls. */
function leaseOutcomeOf(wire: ModelWire, error: unknown): Parameters<HeldModelLease['release']> {
  const limited = rateLimitOf(error, wire.failureOf, Date.now());
  if (!limited) return ['failed'];
  return limited.retryAfterMs !== undefined ? ['rate_limited', limited.retryAfterMs] : ['rate_limited'];
}

/** Aborts the request when the endpoint says nothing for longer than it is expected to. */
class QuietEndpoint {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  /** What the endpoint failed to do, once it was given up on. */
  gaveUp: string | undefined;
  readonly signal = this.controller.signal;

  /** From now, gives up after `ms` unless expected again before then. */
  expect(ms: number, failing: string): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.gaveUp = `${failing} for ${ms / 1_000} s`;
      this.controller.abort();
    }, ms);
  }

  /** The endpoint sent something: the current wait starts again (cheaper than expecting anew per chunk). */
  heard(): void {
    this.timer?.refresh();
  }

  stop(): void {
    clearTimeout(this.timer);
  }
}
