import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';

/** A directory's files (not links, not below subdirectories) and their contents, as one comparable string. */
export async function snapshot(directory: string): Promise<string> {
  const names = (await readdir(directory)).sort();
  return JSON.stringify(
    await Promise.all(names.map(async (name) => [name, await readFile(path.join(directory, name), 'utf8')])),
  );
}

/** Files under `directory` (links not followed) whose content includes `text`. */
export async function filesHolding(directory: string, text: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(directory, { withFileTypes: true })) {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) found.push(...(await filesHolding(full, text)));
    else if (entry.isFile() && (await readFile(full, 'utf8')).includes(text)) found.push(full);
  }
  return found;
}
