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
