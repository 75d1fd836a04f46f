import { Context } from '@temporalio/activity';
import type OpenAI from 'openai';
import type { AssistantMessage } from '../shared/messages';
import type { ModelCallInput } from '../shared/model-call';
import { type ModelProvider, modelProviderOf } from '../shared/model-provider';
import type { ActivityProgress } from '../shared/tool-run';
import type { ToolRegistry } from '../tools/registry';
import { Heartbeater } from './heartbeater';
import { classifyModelError } from './model-errors';
import { assembleStream } from './model-stream';
import { toOpenAiMessages } from './openai-messages';
import { withProviderToolCallIds, withUniqueToolCallIds } from './tool-call-ids';
import type { TranscriptCache } from './transcript-cache';
import type { TranscriptLoader } from './transcript-loader';
import { rebuildTranscript } from './transcript-rebuild';

export interface ModelDeps {
  /** Constructed with `maxRetries: 0`: Temporal's retry policy is the only one. */
  openai: OpenAI;
  defaultModel: string;
  /** What the endpoint serves, for tool schemas and tool call ids; from each call's model name when absent. */
  provider?: ModelProvider;
  tools: ToolRegistry;
  transcriptCache: TranscriptCache;
  loadTranscript: TranscriptLoader;
}

export function createCallModel(deps: ModelDeps) {
  /** One streamed chat completion over the whole transcript, rebuilt from the delta the workflow sent. */
  return async function callModel(input: ModelCallInput): Promise<AssistantMessage> {
    const context = Context.current();
    const messages = await rebuildTranscript(input.transcript, deps);
    const heartbeater = new Heartbeater<ActivityProgress>(context, { kind: 'model', text: '', toolCalls: 0 });
    try {
      const model = input.model ?? deps.defaultModel;
      const provider = deps.provider ?? modelProviderOf(model);
      await deps.tools.ensure(input.toolNames);
      const tools = deps.tools.modelSchemas(input.toolNames, provider);
      const stream = await deps.openai.chat.completions.create(
        {
          model,
          messages: withProviderToolCallIds(toOpenAiMessages(messages, input.systemPrompt), provider),
          ...(tools.length ? { tools } : {}),
          stream: true,
          stream_options: { include_usage: true },
        },
        { signal: context.cancellationSignal },
      );
      const reply = await assembleStream(
        stream,
        (partial) => heartbeater.update({ kind: 'model', ...partial }),
        () => Date.now(),
      );
      return withUniqueToolCallIds(reply, messages);
    } catch (error) {
      if (context.cancellationSignal.aborted) throw context.cancellationSignal.reason ?? error;
      throw classifyModelError(error);
    } finally {
      heartbeater.stop();
    }
  };
}
