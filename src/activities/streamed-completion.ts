import { Context } from '@temporalio/activity';
import type OpenAI from 'openai';
import type { AssistantMessage } from '../shared/messages';
import type { ActivityProgress } from '../shared/tool-run';
import { Heartbeater } from './heartbeater';
import { classifyModelError } from './model-errors';
import { assembleStream } from './model-stream';

type CompletionRequest = Omit<
  OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming,
  'stream' | 'stream_options'
>;

/**
 * One streamed chat completion inside a model activity: the partial answer heartbeated as it
 * arrives (so watchers see it and a dead worker is noticed), cancelled with the activity, and
 * failures classified (retryable or not) the way every model call is.
 */
export async function streamedCompletion(
  openai: OpenAI,
  request: CompletionRequest,
): Promise<AssistantMessage> {
  const context = Context.current();
  const heartbeater = new Heartbeater<ActivityProgress>(context, { kind: 'model', text: '', toolCalls: 0 });
  try {
    const stream = await openai.chat.completions.create(
      { ...request, stream: true, stream_options: { include_usage: true } },
      { signal: context.cancellationSignal },
    );
    return await assembleStream(
      stream,
      (partial) => heartbeater.update({ kind: 'model', ...partial }),
      () => Date.now(),
    );
  } catch (error) {
    if (context.cancellationSignal.aborted) throw context.cancellationSignal.reason ?? error;
    throw classifyModelError(error);
  } finally {
    heartbeater.stop();
  }
}
