import { createHash, randomUUID } from 'node:crypto';
import { mkdir, open, readFile, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { AgentIdSchema } from '../../shared/agent-id';
import { type MemoryEntry, MemoryEntrySchema } from './memory';

export interface MemoryLimits {
  /** Notes one agent may keep; replacing a note is always allowed. */
  maxEntries: number;
  /** UTF-8 bytes of one note's text. */
  maxTextBytes: number;
}

export const DEFAULT_MEMORY_LIMITS: MemoryLimits = { maxEntries: 1_000, maxTextBytes: 16_384 };

/** The agent already keeps `maxEntries` notes and this one is new. */
export class MemoryFullError extends Error {
  constructor(readonly maxEntries: number) {
    super(`memory is full (${maxEntries} notes): replace or shorten existing notes instead`);
    this.name = 'MemoryFullError';
  }
}

export interface NewNote {
  key: string;
  text: string;
  tags: string[];
  conversationId?: string;
}

/**
 * Each agent's notes on the worker's disk: `<root>/<agentId>/<sha256 of key>.json`, one file per
 * note so concurrent writers of different notes never lose each other's work, each written to a
 * temporary file, flushed and renamed into place so a crash leaves the old note or the new one,
 * never half of one. Hashing the key keeps any key (case, spaces, slashes) a safe file name.
 * Workers that serve one agent must share `root` (one machine, or a shared volume).
 */
export class MemoryStore {
  constructor(
    readonly root: string,
    readonly limits: MemoryLimits = DEFAULT_MEMORY_LIMITS,
  ) {}

  /** Creates or replaces the note named `note.key`; `replaced` says which. */
  async put(
    agentId: string,
    note: NewNote,
    now: Date = new Date(),
  ): Promise<{ entry: MemoryEntry; replaced: boolean }> {
    const textBytes = Buffer.byteLength(note.text);
    if (textBytes > this.limits.maxTextBytes) {
      throw new RangeError(
        `a note holds at most ${this.limits.maxTextBytes} bytes; this one has ${textBytes}`,
      );
    }
    const previous = await this.get(agentId, note.key);
    if (!previous && (await this.noteFiles(agentId)).length >= this.limits.maxEntries) {
      throw new MemoryFullError(this.limits.maxEntries);
    }
    const entry: MemoryEntry = {
      key: note.key,
      text: note.text,
      tags: note.tags,
      createdAt: previous?.createdAt ?? now.toISOString(),
      updatedAt: now.toISOString(),
      ...(note.conversationId !== undefined ? { conversationId: note.conversationId } : {}),
    };
    const file = this.fileOf(agentId, note.key);
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    await writeAtomically(file, JSON.stringify(entry));
    return { entry, replaced: previous !== undefined };
  }

  async get(agentId: string, key: string): Promise<MemoryEntry | undefined> {
    const entry = await readEntry(this.fileOf(agentId, key));
    // Two keys with one hash prefix are astronomically unlikely; never answer with the wrong note.
    return entry?.key === key ? entry : undefined;
  }

  /** Every note of the agent; unreadable files (a foreign or damaged file) are skipped. */
  async all(agentId: string): Promise<MemoryEntry[]> {
    const directory = this.directoryOf(agentId);
    const entries = await Promise.all(
      (await this.noteFiles(agentId)).map((name) => readEntry(path.join(directory, name))),
    );
    return entries.filter((entry): entry is MemoryEntry => entry !== undefined);
  }

  private async noteFiles(agentId: string): Promise<string[]> {
    try {
      return (await readdir(this.directoryOf(agentId))).filter((name) => /^[0-9a-f]{40}\.json$/.test(name));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
  }

  private directoryOf(agentId: string): string {
    return path.join(this.root, AgentIdSchema.parse(agentId));
  }

  private fileOf(agentId: string, key: string): string {
    const name = createHash('sha256').update(key).digest('hex').slice(0, 40);
    return path.join(this.directoryOf(agentId), `${name}.json`);
  }
}

async function readEntry(file: string): Promise<MemoryEntry | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const parsed = MemoryEntrySchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Written beside `file`, flushed to disk, then renamed over it: readers see the old or the new content whole. */
async function writeAtomically(file: string, content: string): Promise<void> {
  const temporary = `${file}.${randomUUID()}.tmp`;
  try {
    const handle = await open(temporary, 'wx', 0o600);
    try {
      await handle.writeFile(content);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}
