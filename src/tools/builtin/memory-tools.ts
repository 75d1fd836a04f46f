import { createHash } from 'node:crypto';
import { z } from 'zod';
import { wordsOf, rankByRelevance } from './memory-ranking';
import { MemoryFullError, type MemoryStore } from './memory-store';
import { type AgentTool, defineTool, jsonResult } from '../tool';
import { ToolError } from '../tool-error';

/** What one note and one search may hold; the model is told the result limits in the schema. */
const LIMITS = {
  keyChars: 200,
  tags: 10,
  tagChars: 40,
  defaultResults: 5,
  maxResults: 20,
  snippetChars: 300,
} as const;

const noControlCharacters = (text: string) => !/\p{Cc}/u.test(text);
const KeySchema = z
  .string()
  .trim()
  .min(1)
  .max(LIMITS.keyChars)
  .refine(noControlCharacters, 'a key has no control characters');

/**
 * `memory_write`, `memory_search` and `memory_get`: notes that outlive the conversation, shared by
 * every conversation of the same agent (the conversation option `agentId`).
 */
export function createMemoryTools(store: MemoryStore): AgentTool[] {
  const maxTextBytes = store.limits.maxTextBytes;
  const memoryWrite = defineTool({
    name: 'memory_write',
    label: 'Remember',
    description: `Save a note to your long-term memory, which later conversations of the same agent can search. Give a short key to update the note later (writing the same key replaces it); without one a new note is made. At most ${maxTextBytes} bytes of text.`,
    parameters: z.object({
      text: z
        .string()
        .min(1)
        .describe('What to remember, self-contained: it will be read without this conversation'),
      key: KeySchema.optional().describe(
        'A short name for the note, e.g. "user-preferences"; an existing note with this key is replaced',
      ),
      tags: z
        .array(z.string().trim().min(1).max(LIMITS.tagChars).refine(noControlCharacters))
        .max(LIMITS.tags)
        .optional()
        .describe('Words to find the note by'),
    }),
    category: 'files',
    // Replaying a call writes the same note under the same key (made from the tool call id when absent).
    idempotent: true,
    // A local modification (acp risk table: medium): the note outlives the conversation and steers the
    // agent's later conversations, so what an untrusted page talked the model into should not land unasked.
    risk: 'medium',
    async execute(toolCallId, params, _signal, _onUpdate, { agentId, conversationId }) {
      const key = params.key ?? noteKeyFor(conversationId, toolCallId);
      try {
        const { entry, replaced } = await store.put(agentId, {
          key,
          text: params.text,
          tags: [...new Set(params.tags ?? [])],
          conversationId,
        });
        return jsonResult({ saved: entry.key, replaced, updatedAt: entry.updatedAt });
      } catch (error) {
        if (error instanceof RangeError) throw new ToolError('InvalidArgs', error.message);
        if (error instanceof MemoryFullError) throw new ToolError('ExecutionFailed', error.message);
        throw error;
      }
    },
  });

  const memorySearch = defineTool({
    name: 'memory_search',
    label: 'Search memory',
    description:
      'Search your long-term memory (notes saved by memory_write in any conversation of this agent) by words. Returns the best matches with a snippet; memory_get reads a whole note.',
    parameters: z.object({
      query: z.string().trim().min(1).describe('Words to look for'),
      limit: z
        .number()
        .int()
        .min(1)
        .max(LIMITS.maxResults)
        .optional()
        .describe(`Most notes to return (default ${LIMITS.defaultResults}, at most ${LIMITS.maxResults})`),
      tag: z.string().trim().min(1).optional().describe('Only notes with this tag'),
    }),
    category: 'search',
    idempotent: true,
    risk: 'low',
    async execute(_toolCallId, params, _signal, _onUpdate, { agentId }) {
      const queryWords = wordsOf(params.query);
      if (queryWords.length === 0) throw new ToolError('InvalidArgs', 'the query has no words to search for');
      const all = await store.all(agentId);
      const candidates = params.tag ? all.filter((entry) => entry.tags.includes(params.tag!)) : all;
      const ranked = rankByRelevance(candidates, params.query).slice(
        0,
        params.limit ?? LIMITS.defaultResults,
      );
      return jsonResult({
        query: params.query,
        notes: all.length,
        results: ranked.map(({ entry, score }) => ({
          key: entry.key,
          score: Math.round(score * 1_000) / 1_000,
          tags: entry.tags,
          updatedAt: entry.updatedAt,
          snippet: snippetOf(entry.text, queryWords),
        })),
      });
    },
  });

  const memoryGet = defineTool({
    name: 'memory_get',
    label: 'Read memory',
    description:
      'Read one note of your long-term memory by its key (as memory_search or memory_write gave it).',
    parameters: z.object({ key: KeySchema.describe("The note's key") }),
    category: 'files',
    idempotent: true,
    risk: 'low',
    async execute(_toolCallId, params, _signal, _onUpdate, { agentId }) {
      const entry = await store.get(agentId, params.key);
      if (!entry) {
        throw new ToolError(
          'FileNotFound',
          `no note with key ${JSON.stringify(params.key)} in memory; memory_search finds keys`,
        );
      }
      return jsonResult(entry);
    },
  });

  return [memoryWrite, memorySearch, memoryGet] as AgentTool[];
}

/** Unique per conversation and tool call, the same on every attempt of that call. */
function noteKeyFor(conversationId: string, toolCallId: string): string {
  return `note-${createHash('sha256').update(`${conversationId}\n${toolCallId}`).digest('hex').slice(0, 12)}`;
}

/** A snippet of `text` (`LIMITS.snippetChars` at most), starting a little before the first query word it contains. */
function snippetOf(text: string, queryWords: string[]): string {
  if (text.length <= LIMITS.snippetChars) return text;
  const lower = text.toLowerCase();
  const positions = queryWords.map((word) => lower.indexOf(word)).filter((index) => index >= 0);
  const first = positions.length ? Math.min(...positions) : 0;
  const start = Math.max(0, Math.min(first - 40, text.length - LIMITS.snippetChars));
  return `${start > 0 ? '…' : ''}${text.slice(start, start + LIMITS.snippetChars)}${start + LIMITS.snippetChars < text.length ? '…' : ''}`;
}
