/** One request as a provider's prompt cache sees it. */
export interface PrefixSample {
  /** The request's input in the order providers cache it: tools, then messages. */
  inputChars: number;
  /** How much of it repeats the previous request's input of the same conversation, from the start. */
  repeatedChars: number;
  /** What a provider that caches by prefix reports (about 4 characters a token). */
  promptTokens: number;
  cachedTokens: number;
}

interface CachedRequest {
  tools?: unknown;
  messages: unknown[];
}

/**
 * A provider's prompt cache, as OpenAI, Gemini and DeepSeek run theirs: a request whose input
 * starts with a previous request's input reads that part from the cache. Keyed by conversation, so
 * conversations running side by side do not share entries.
 */
export class PromptCache {
  private readonly last = new Map<string, string>();
  readonly samples = new Map<string, PrefixSample[]>();

  /** Records the request and says what a provider would report for it. */
  see(conversation: string, request: CachedRequest): PrefixSample {
    const input = [
      JSON.stringify(request.tools ?? []),
      ...request.messages.map((m) => JSON.stringify(m)),
    ].join('\n');
    const previous = this.last.get(conversation) ?? '';
    const repeatedChars = commonPrefixLength(previous, input);
    const sample = {
      inputChars: input.length,
      repeatedChars,
      promptTokens: Math.ceil(input.length / 4),
      cachedTokens: Math.floor(repeatedChars / 4),
    };
    this.last.set(conversation, input);
    const list = this.samples.get(conversation) ?? [];
    list.push(sample);
    this.samples.set(conversation, list);
    return sample;
  }
}

function commonPrefixLength(a: string, b: string): number {
  const max = Math.min(a.length, b.length);
  let index = 0;
  while (index < max && a.charCodeAt(index) === b.charCodeAt(index)) index++;
  return index;
}
