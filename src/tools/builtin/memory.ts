import { z } from 'zod';

/** One note in an agent's durable memory, as stored on the worker's disk and shown by `memory_get`. */
export const MemoryEntrySchema = z.object({
  /** Chosen by the writer (or made from the tool call); writing the same key again replaces the note. */
  key: z.string().min(1),
  text: z.string(),
  tags: z.array(z.string()),
  /** ISO 8601. */
  createdAt: z.string(),
  updatedAt: z.string(),
  /** The conversation that last wrote it. */
  conversationId: z.string().optional(),
});
export type MemoryEntry = z.infer<typeof MemoryEntrySchema>;
