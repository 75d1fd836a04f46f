import type OpenAI from 'openai';
import type { LiveModelCalls } from './live-model-calls';
import type { LiveModelText } from '../client/live-model-text';
import type { AssistantMessage } from '../shared/messages';
import type { ModelCallInput } from '../shared/model-call';
import type { ModelStreamTimeouts } from '../shared/model-stream-timeouts';
import { type ModelProvider, modelProviderOf } from '../shared/model-provider';
import type { ToolRegistry } from '../tools/registry';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { recordModelCost } from '../shared/agent-metrics';
import type { ModelApi } from '../shared/model-api';
import { type ModelPrices, pricedUsage } from '../shared/model-prices';
import { type ModelWire, chatCompletionsWire, responsesWire } from './model-wire';
import { streamedModelCall } from './streamed-completion';
import { withUniqueToolCallIds } from './tool-call-ids';
import type { ModelLimiter } from './model-lease';
import type { DailyBudgetSpent } from '../shared/daily-budget';
import type { DailyTokenLedger } from './daily-token-ledger';
import type { TranscriptCache } from './transcript-cache';
import type { TranscriptLoader } from './transcript-loader';
import { rebuildTranscript } from './transcript-rebuild';

export interface ModelDeps {
  /** Constructed with `maxRetries: 0`: Temporal's retry policy is the only one. */
  openai: OpenAI;
  /** The model a conversation gets when its options name none. */
  defaultModel: string;
  /** What the endpoint serves, for tool schemas and tool call ids; from each call's model name when absent. */
  provider?: ModelProvider;
  /** The API conversations call the model through unless their options name another; `chat` when absent. */
  api?: ModelApi;
  /** The wires this worker calls models through beyond Chat Completions over `openai` (Anthropic's needs its own client). */
  wires?: Partial<Record<ModelApi, ModelWire>>;
  /** The worker's tools, whose schemas the model is offered. */
  tools: ToolRegistry;
  transcriptCache: TranscriptCache;
  loadTranscript: TranscriptLoader;
  /** Where the answer's text goes as it arrives, for watchers in this process. */
  liveText?: LiveModelText;
  /** Where the answer's text goes as it arrives, for watchers in other processes (the worker's push endpoint). */
  liveCalls?: LiveModelCalls;
  /** When a quiet endpoint is given up on; DEFAULT_MODEL_STREAM_TIMEOUTS for those left out. */
  streamTimeouts?: Partial<ModelStreamTimeouts>;
  /** Limits the fleet shares on the endpoint (`fleetModelLimiter`); none when absent, at no cost per call. */
  limiter?: ModelLimiter;
  /** What each model's tokens cost (AGENT_MODEL_PRICES): each call's usage then carries its cost. */
  prices?: ModelPrices;
  /** The operator's daily token budgets per agent (`AGENT_BUDGET_TOKENS_PER_DAY`); none when absent. */
  dailyLedger?: DailyTokenLedger;
}

export function createCallModel(deps: ModelDeps) {
  /** One streamed chat completion over the whole transcript, rebuilt from the delta the workflow sent. */
  return async function callModel(input: ModelCallInput): Promise<AssistantMessage | DailyBudgetSpent> {
    const daily = deps.dailyLedger?.gateFor(input.agentId);
    const spent = await daily?.check();
    if (spent) return spent;
    const messages = await rebuildTranscript(input.transcript, deps);
    const model = input.model ?? deps.defaultModel;
    const provider = deps.provider ?? modelProviderOf(model);
    await deps.tools.ensure(input.toolNames);
    const tools = deps.tools.modelSchemas(input.toolNames, provider);
    const stream = wireFor(
      input.api ?? deps.api ?? 'chat',
      deps,
    )({
      model,
      provider,
      ...(input.systemPrompt !== undefined ? { systemPrompt: input.systemPrompt } : {}),
      messages,
      tools,
    });
    const reply = await streamedModelCall(model, stream, {
      ...(deps.liveText ? { live: deps.liveText } : {}),
      ...(deps.liveCalls ? { liveCalls: deps.liveCalls } : {}),
      ...(deps.streamTimeouts ? { timeouts: deps.streamTimeouts } : {}),
      ...(deps.limiter ? { limiter: deps.limiter } : {}),
    });
    await daily?.report(reply.usage);
    // Priced by the name asked for, else the one the endpoint answered with (`gpt-4o-2024-08-06`).
    const usage = reply.usage && pricedUsage(reply.usage, deps.prices, [model, reply.model]);
    recordModelCost(Context.current().metricMeter, model, usage?.costUsd);
    return withUniqueToolCallIds({ ...reply, ...(usage ? { usage } : {}) }, messages);
  };
}

/** The wire for `api`: the worker's own, or Chat Completions over its OpenAI client. */
export function wireFor(api: ModelApi, deps: Pick<ModelDeps, 'openai' | 'wires'>): ModelWire {
  const given = deps.wires?.[api];
  if (given) return given;
  if (api === 'chat') return chatCompletionsWire(deps.openai);
  if (api === 'responses') return responsesWire(deps.openai);
  throw ApplicationFailure.nonRetryable(
    `this worker cannot call models through the ${api} API (set AGENT_MODEL_API or AGENT_MODEL_PROVIDER on the worker)`,
    'ModelApiUnavailable',
  );
}
