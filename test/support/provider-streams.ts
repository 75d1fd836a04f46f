import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type OpenAI from 'openai';

type Chunk = OpenAI.Chat.Completions.ChatCompletionChunk;

const DIR = path.join(__dirname, '..', 'fixtures', 'provider-streams');

export interface ExpectedText {
  answer: string;
  /** What the model thought, kept apart from the answer; none when absent. */
  thinking?: string;
  usage?: { inputTokens: number; outputTokens: number };
}

export interface ExpectedToolCall {
  id: string;
  name: string;
  arguments: string;
  /** Gemini's thought signature for the call; none when absent. */
  thoughtSignature?: string;
  /** Text the model said before calling; none when absent. */
  text?: string;
  thinking?: string;
}

export type ProviderStream =
  | { file: string; provider: string; kind: 'text'; sse: string; expected: ExpectedText }
  | { file: string; provider: string; kind: 'toolCall'; sse: string; expected: ExpectedToolCall };

interface ProviderFile {
  provider: string;
  text: { sse: string[]; expected: ExpectedText };
  toolCall: { sse: string[]; expected: ExpectedToolCall };
  /** A refusal in the model's words, where the provider sends one. */
  refusal?: { sse: string[]; expected: { refusal: string } };
}

/** The refusal stream `file` holds, as the wire carries it, and the words it must give. */
export function providerRefusal(file: string): { sse: string; refusal: string } {
  const doc = JSON.parse(readFileSync(path.join(DIR, file), 'utf8')) as ProviderFile;
  if (!doc.refusal) throw new Error(`${file} holds no refusal stream`);
  return { sse: sseBody(doc.refusal.sse), refusal: doc.refusal.expected.refusal };
}

/** Every recorded stream of test/fixtures/provider-streams: a text answer and a tool call per provider. */
export function providerStreams(): ProviderStream[] {
  return readdirSync(DIR)
    .filter((name) => name.endsWith('.json'))
    .sort()
    .flatMap((file): ProviderStream[] => {
      const doc = JSON.parse(readFileSync(path.join(DIR, file), 'utf8')) as ProviderFile;
      return [
        {
          file,
          provider: doc.provider,
          kind: 'text',
          sse: sseBody(doc.text.sse),
          expected: doc.text.expected,
        },
        {
          file,
          provider: doc.provider,
          kind: 'toolCall',
          sse: sseBody(doc.toolCall.sse),
          expected: doc.toolCall.expected,
        },
      ];
    });
}

/** The events as they go over the wire: each `data:` line followed by a blank line. */
function sseBody(lines: string[]): string {
  return lines.map((line) => `${line}\n\n`).join('');
}

/** The chunks of an SSE body, as the OpenAI SDK hands them on (the `[DONE]` marker ends it). */
export function chunksOf(sse: string): Chunk[] {
  const chunks: Chunk[] = [];
  for (const event of sse.split('\n\n')) {
    const data = event
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice('data:'.length).trimStart())
      .join('\n');
    if (!data) continue;
    if (data === '[DONE]') break;
    chunks.push(JSON.parse(data) as Chunk);
  }
  return chunks;
}
