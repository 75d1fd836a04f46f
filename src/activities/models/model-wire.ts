import type OpenAI from 'openai';
import type { AssistantMessage, Message } from '../../shared/messages';
import type { ModelApi } from '../../shared/model-api';
import type { ModelProvider } from '../../shared/model-provider';

/**
 * The contract between the model activities and the APIs behind them: each API (Chat Completions
 * and the Responses API in `openai/`, Anthropic's Messages API in `anthropic/`) turns a request in
 * the transcript's own terms into its wire format, parses its stream into an answer, and says what
 * its client's errors mean. Nothing here loads a provider's SDK.
 */

/** One model call, in the transcript's own terms: each wire turns it into its API's request. */
export interface WireRequest {
  /** The model name to ask for. */
  model: string;
  /** What the endpoint serves, for what differs between providers on Chat Completions. */
  provider: ModelProvider;
  /** Sent before the transcript; none when absent. */
  systemPrompt?: string;
  /** The whole transcript, oldest first. */
  messages: Message[];
  /** The tools offered, as Chat Completions function tools (each wire reshapes them for its API). */
  tools: OpenAI.Chat.Completions.ChatCompletionTool[];
}

/** A model's answer as it streams in, reported after each piece. */
export interface PartialAnswer {
  /** The answer so far: text only, never thinking. */
  text: string;
  /** Tool calls begun so far. */
  toolCalls: number;
  /** How much the model has thought so far (characters): a reasoning model may think long before its first word. */
  thinkingLength: number;
}

/**
 * A model call's stream: opened with the activity's abort signal, each partial answer reported as
 * it arrives, the whole answer returned when the stream ends. Failures are the client library's own
 * errors, which the wire's `failureOf` reads.
 */
export type ModelStream = (
  signal: AbortSignal,
  onPartial: (partial: PartialAnswer) => void,
  now: () => number,
) => Promise<AssistantMessage>;

/**
 * A failed call in the terms every API shares, for the retry policy and the metrics, told apart by
 * `kind`: `status`, `unreachable` or `transient`.
 */
export type WireFailure = StatusFailure | UnreachableFailure | TransientFailure;

/** The endpoint answered with an HTTP error status. */
export interface StatusFailure {
  /** Always `status`. */
  kind: 'status';
  /** The HTTP status. */
  status: number;
  /** What the endpoint said. */
  message: string;
  /** The answer's headers: a Retry-After there says when to come back. */
  headers?: Headers;
}

/** No answer at all: the connection was refused, reset or timed out. */
export interface UnreachableFailure {
  /** Always `unreachable`. */
  kind: 'unreachable';
  /** What the client said. */
  message: string;
}

/** An error event in a stream already answered 200 that a retry may get past. */
export interface TransientFailure {
  /** Always `transient`. */
  kind: 'transient';
  /** The provider's name for the error (`overloaded_error`). */
  type: string;
  /** Whether the endpoint is limiting the rate or is unavailable, for the metrics. */
  reason: 'rate_limited' | 'unavailable';
  /** What the endpoint said. */
  message: string;
}

/** An API the model is called through, built once per worker over its own client. */
export interface ModelWire {
  /**
   * Who answers, as OpenTelemetry's GenAI conventions name providers (`gen_ai.provider.name`):
   * `openai`, `anthropic`, `gcp.gemini`, … or `_OTHER` for an endpoint none of them names.
   */
  readonly providerName: string;
  /** Where its requests go, for the span's `server.address` and `server.port`. */
  readonly server?: WireServer;
  /** The stream of one call. */
  open(request: WireRequest): ModelStream;
  /** What an error of this wire's client means; undefined for one it does not know (a bug, an abort). */
  failureOf(error: unknown): WireFailure | undefined;
}

/** Where a wire's requests go. */
export interface WireServer {
  /** The endpoint's host name. */
  address: string;
  /** Its port, when its URL names one. */
  port?: number;
}

/** The wires a worker calls models through, by API. */
export type ModelWires = Partial<Record<ModelApi, ModelWire>>;
