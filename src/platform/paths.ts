import { chmodSync, mkdirSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The repository (or installed package) root: two levels above this file in both src/ and dist/. */
export const PACKAGE_ROOT = path.resolve(__dirname, '..', '..');

/** Where a Temporal CLI built by the project is kept. */
export const PROJECT_TOOLS_DIR = path.join(PACKAGE_ROOT, '.tools');

/** Conversations' SQLite store and server logs: DURABLE_AGENT_DATA_DIR, else ~/.durable-agent. */
export function dataDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(env.DURABLE_AGENT_DATA_DIR || path.join(os.homedir(), '.durable-agent'));
}

/**
 * Creates `directory` (and missing parents) readable by this user only, and takes group and other
 * access away from it when this user owns it: it holds conversations, secrets and memory.
 */
export function ensurePrivateDirectory(directory: string): void {
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  const info = statSync(directory);
  if ((info.mode & 0o077) !== 0 && info.uid === process.getuid?.()) chmodSync(directory, info.mode & 0o700);
}
