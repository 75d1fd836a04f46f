import type { Message } from '../shared/messages';
import type { TranscriptDelta } from '../shared/model-call';
import type { TranscriptCache } from './transcript-cache';
import type { TranscriptLoader } from './transcript-loader';

export interface TranscriptSources {
  transcriptCache: TranscriptCache;
  loadTranscript: TranscriptLoader;
}

/** The whole transcript from a delta: the earlier part from this worker's cache or, on a miss, the workflow. */
export async function rebuildTranscript(
  delta: TranscriptDelta,
  sources: TranscriptSources,
): Promise<Message[]> {
  const earlier =
    sources.transcriptCache.prefix(delta.conversationId, delta.generation, delta.base) ??
    (await sources.loadTranscript(delta.conversationId, delta.generation, delta.base));
  const messages = [...earlier, ...delta.newMessages];
  sources.transcriptCache.store(delta.conversationId, delta.generation, messages);
  return messages;
}
