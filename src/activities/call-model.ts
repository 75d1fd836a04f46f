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
import type { ModelWire, ModelWires, WireRequest } from './models/model-wire';
import { streamedModelCall } from './models/streamed-model-call';
import { withUniqueToolCallIds } from './tool-call-ids';
import type { ModelLimiter } from './model-lease';
import type { DailyBudgetSpent } from '../shared/daily-budget';
import type { DailyTokenLedger } from './daily-token-ledger';
import type { TranscriptCache } from './transcript-cache';
import type { TranscriptLoader } from './transcript-loader';
import { rebuildTranscript } from './transcript-rebuild';
import { clientToolSchemas } from './client-tool-schemas';

/** What the model activities call models with: built once per worker, shared by every call. */
export interface ModelDeps {
  /** The model a conversation gets when its options name none. */
  defaultModel: string;
  /** What the endpoint serves, for tool schemas and tool call ids; from each call's model name when absent. */
  provider?: ModelProvider;
  /** The API conversations call the model through unless their options name another; `chat` when absent. */
  api?: ModelApi;
  /** The wires this worker calls models through, by API, each over its own client. */
  wires: ModelWires;
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
  const streamOptions = {
    ...(deps.liveText ? { live: deps.liveText } : {}),
    ...(deps.liveCalls ? { liveCalls: deps.liveCalls } : {}),
    ...(deps.streamTimeouts ? { timeouts: deps.streamTimeouts } : {}),
    ...(deps.limiter ? { limiter: deps.limiter } : {}),
  };
  /** One streamed model call over the whole transcript, rebuilt from the delta the workflow sent. */
  return async function callModel(input: ModelCallInput): Promise<AssistantMessage | DailyBudgetSpent> {
    const daily = deps.dailyLedger?.gateFor(input.agentId);
    const spent = await daily?.check();
    if (spent) return spent;
    const messages = await rebuildTranscript(input.transcript, deps);
    const model = input.model ?? deps.defaultModel;
    const provider = deps.provider ?? modelProviderOf(model);
    await deps.tools.ensure(input.toolNames);
    const tools = [
      ...deps.tools.modelSchemas(input.toolNames, provider),
      ...clientToolSchemas(input.clientTools ?? [], provider),
    ];
    const wire = wireFor(input.api ?? deps.api ?? 'chat', deps.wires);
    const request: WireRequest = {
      model,
      provider,
      ...(input.systemPrompt !== undefined ? { systemPrompt: input.systemPrompt } : {}),
      messages,
      tools,
    };
    const reply = await streamedModelCall(wire, request, streamOptions);
    await daily?.report(reply.usage);
    // Priced by the name asked for, else the one the endpoint answered with (`gpt-4o-2024-08-06`).
    const usage = reply.usage && pricedUsage(reply.usage, deps.prices, [model, reply.model]);
    recordModelCost(Context.current().metricMeter, model, usage?.costUsd);
    return withUniqueToolCallIds({ ...reply, ...(usage ? { usage } : {}) }, messages);
  };
}

/** The worker's wire for `api`; a conversation asking for one the worker was not set up for fails for good. */
export function wireFor(api: ModelApi, wires: ModelWires): ModelWire {
  const wire = wires[api];
  if (wire) return wire;
  throw ApplicationFailure.nonRetryable(
    `this worker cannot call models through the ${api} API (set AGENT_MODEL_API or AGENT_MODEL_PROVIDER on the worker)`,
    'ModelApiUnavailable',
  );
}
