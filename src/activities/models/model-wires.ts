import type OpenAI from 'openai';
import type { ModelApi } from '../../shared/model-api';
import type { ModelProvider } from '../../shared/model-provider';
import type { ModelSettings } from './model-settings';
import type { ModelWires } from './model-wire';

/** The model a worker calls, as its settings describe it: built once, when the worker starts. */
export interface WorkerModel {
  /** The model a conversation gets when its options name none. */
  defaultModel: string;
  /** What the endpoint serves, for tool schemas and tool call ids; from each call's model name when absent. */
  provider?: ModelProvider;
  /** The API conversations call the model through unless their options name another. */
  api: ModelApi;
  /** The wires the settings make: each over its API's client, made here once. */
  wires: ModelWires;
}

/**
 * The worker's model from its settings. Each API's module (and its provider's SDK) is loaded only
 * when the settings ask for it: a worker on Anthropic's API never loads OpenAI's, and the other way round.
 */
export async function workerModelOf(settings: ModelSettings): Promise<WorkerModel> {
  const model = {
    defaultModel: settings.model,
    ...(settings.provider ? { provider: settings.provider } : {}),
  };
  if (settings.api === 'anthropic') {
    const { anthropicWires } = await import('./anthropic/anthropic-wire');
    return { ...model, api: 'anthropic', wires: anthropicWires(settings.anthropic ?? { apiKey: 'unused' }) };
  }
  const { createOpenAiClient, openAiWires } = await import('./openai/openai-wires');
  return { ...model, api: settings.api ?? 'chat', wires: openAiWires(createOpenAiClient(settings)) };
}

/** Chat Completions and the Responses API over an OpenAI client the caller made. */
export async function wiresOver(openai: OpenAI): Promise<ModelWires> {
  const { openAiWires } = await import('./openai/openai-wires');
  return openAiWires(openai);
}
