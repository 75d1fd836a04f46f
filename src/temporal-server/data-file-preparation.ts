import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { SEARCH_ATTRIBUTE_TYPES } from '../shared/search-attributes';

/**
 * Which namespaces an embedded server's data file holds ready for conversations (registered, with
 * every conversation search attribute), kept beside it: a server on a file that holds them serves
 * them from the moment its port opens.
 */
interface PreparedRecord {
  namespaces: Record<string, string[]>;
}

function recordFile(dbFile: string): string {
  return path.join(path.dirname(dbFile), `${path.basename(dbFile, '.db')}-prepared.json`);
}

async function readRecord(dbFile: string): Promise<PreparedRecord> {
  const text = await readFile(recordFile(dbFile), 'utf8').catch(() => undefined);
  try {
    const parsed = text === undefined ? undefined : (JSON.parse(text) as Partial<PreparedRecord>);
    if (parsed?.namespaces && typeof parsed.namespaces === 'object') return { namespaces: parsed.namespaces };
  } catch {
    // A record that does not parse is no record: the file is prepared again.
  }
  return { namespaces: {} };
}

/** Whether `dbFile` exists and holds `namespace` with every conversation search attribute. */
export async function preparedDataFile(dbFile: string, namespace: string): Promise<boolean> {
  if (!existsSync(dbFile)) return false;
  const attributes = (await readRecord(dbFile)).namespaces[namespace];
  return (
    Array.isArray(attributes) &&
    Object.keys(SEARCH_ATTRIBUTE_TYPES).every((name) => attributes.includes(name))
  );
}

/** Records that `dbFile` now holds `namespace` with every conversation search attribute. */
export async function recordPreparedDataFile(dbFile: string, namespace: string): Promise<void> {
  const record = await readRecord(dbFile);
  record.namespaces[namespace] = Object.keys(SEARCH_ATTRIBUTE_TYPES);
  await writeFile(recordFile(dbFile), `${JSON.stringify(record)}\n`, { mode: 0o600 });
}
