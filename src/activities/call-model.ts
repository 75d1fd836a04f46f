import { Context } from '@temporalio/activity';
import type OpenAI from 'openai';
import type { AssistantMessage, Message } from '../shared/messages';
import type { ModelCallInput, TranscriptDelta } from '../shared/model-call';
import type { ActivityProgress } from '../shared/tool-run';
import type { ToolRegistry } from '../tools/registry';
import { Heartbeater } from './heartbeater';
import { classifyModelError } from './model-errors';
import { assembleStream } from './model-stream';
import { toOpenAiMessages } from './openai-messages';
import { withUniqueToolCallIds } from './tool-call-ids';
import type { TranscriptCache } from './transcript-cache';
import type { TranscriptLoader } from './transcript-loader';

export interface ModelDeps {
  /** Constructed with `maxRetries: 0`: Temporal's retry policy is the only one. */
  openai: OpenAI;
  defaultModel: string;
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
      const tools = deps.tools.modelSchemas(input.toolNames);
      const stream = await deps.openai.chat.completions.create(
        {
          model: input.model ?? deps.defaultModel,
          messages: toOpenAiMessages(messages, input.systemPrompt),
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

async function rebuildTranscript(delta: TranscriptDelta, deps: ModelDeps): Promise<Message[]> {
  const earlier =
    deps.transcriptCache.prefix(delta.conversationId, delta.generation, delta.base) ??
    (await deps.loadTranscript(delta.conversationId, delta.generation, delta.base));
  const messages = [...earlier, ...delta.newMessages];
  deps.transcriptCache.store(delta.conversationId, delta.generation, messages);
  return messages;
}
