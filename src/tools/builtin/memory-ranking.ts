import type { MemoryEntry } from './memory';

export interface RankedEntry {
  entry: MemoryEntry;
  score: number;
}

/** Okapi BM25's usual constants: term frequency saturation and length normalisation. */
const K1 = 1.2;
const B = 0.75;
/** A word of the key or a tag counts as much as this many words of the text: names say what a note is about. */
const LABEL_WEIGHT = 3;

/** Lower-case words of letters and digits in any script. */
export function wordsOf(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/**
 * The entries that share a word with `query`, best first, by BM25 over key, tags and text (key and
 * tags weighted up). Ties go to the more recently updated note.
 */
export function rankByRelevance(entries: MemoryEntry[], query: string): RankedEntry[] {
  const queryWords = [...new Set(wordsOf(query))];
  if (queryWords.length === 0 || entries.length === 0) return [];
  const documents = entries.map((entry) => {
    const counts = new Map<string, number>();
    let length = 0;
    const add = (words: string[], weight: number) => {
      for (const word of words) {
        counts.set(word, (counts.get(word) ?? 0) + weight);
        length += weight;
      }
    };
    add(wordsOf(entry.key), LABEL_WEIGHT);
    add(entry.tags.flatMap(wordsOf), LABEL_WEIGHT);
    add(wordsOf(entry.text), 1);
    return { entry, counts, length };
  });
  const averageLength = documents.reduce((sum, document) => sum + document.length, 0) / documents.length || 1;
  const inverseFrequency = new Map(
    queryWords.map((word) => {
      const containing = documents.filter((document) => document.counts.has(word)).length;
      return [word, Math.log(1 + (documents.length - containing + 0.5) / (containing + 0.5))];
    }),
  );
  return documents
    .map(({ entry, counts, length }) => {
      let score = 0;
      for (const word of queryWords) {
        const frequency = counts.get(word);
        if (!frequency) continue;
        const norm = frequency + K1 * (1 - B + (B * length) / averageLength);
        score += inverseFrequency.get(word)! * ((frequency * (K1 + 1)) / norm);
      }
      return { entry, score };
    })
    .filter((ranked) => ranked.score > 0)
    .sort((a, b) => b.score - a.score || b.entry.updatedAt.localeCompare(a.entry.updatedAt));
}
