import { chmod, mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { rapSettingsFromEnv } from '../../src/rap/rap-settings';
import { MemoryStore } from '../../src/tools/builtin/memory-store';
import { DirectoryBlobStore } from '../../src/worker/blob-store';
import { ensurePrivateDirectory } from '../../src/platform/paths';

/** What the worker keeps on disk (conversations, secrets, memory, payloads) is readable by its user only. */
let parent: string;
let previousUmask: number;

beforeEach(async () => {
  // The common default: without explicit modes, files come out world-readable.
  previousUmask = process.umask(0o022);
  parent = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-private-'));
});
afterEach(async () => {
  process.umask(previousUmask);
  await rm(parent, { recursive: true, force: true });
});

const modeOf = async (file: string) => (await stat(file)).mode & 0o777;

test('a new data directory and its missing parents are created 0700', async () => {
  const directory = path.join(parent, 'a', 'b', 'data');
  ensurePrivateDirectory(directory);
  expect(await modeOf(directory)).toBe(0o700);
  expect(await modeOf(path.join(parent, 'a'))).toBe(0o700);
});

test('an existing data directory of ours that others could read is tightened to 0700', async () => {
  const directory = path.join(parent, 'data');
  await mkdir(directory);
  await chmod(directory, 0o755);
  ensurePrivateDirectory(directory);
  expect(await modeOf(directory)).toBe(0o700);
});

test('the generated RAP secret lives in a private data directory, in a private file', async () => {
  const data = path.join(parent, 'data');
  rapSettingsFromEnv({ DURABLE_AGENT_DATA_DIR: data, DURABLE_AGENT_RAP_TOOLSETS: 'http://127.0.0.1:9' });
  expect(await modeOf(data)).toBe(0o700);
  expect(await modeOf(path.join(data, 'rap-secret'))).toBe(0o600);
});

test('blobs: directories 0700, files 0600', async () => {
  const store = new DirectoryBlobStore(path.join(parent, 'blobs'));
  const key = await store.put(new TextEncoder().encode('payload'));
  const file = path.join(parent, 'blobs', key.slice(0, 2), key);
  expect(await modeOf(path.join(parent, 'blobs'))).toBe(0o700);
  expect(await modeOf(path.dirname(file))).toBe(0o700);
  expect(await modeOf(file)).toBe(0o600);
});

test('memory notes: directories 0700, files 0600', async () => {
  const root = path.join(parent, 'memory');
  const store = new MemoryStore(root);
  await store.put('agent-1', { key: 'k', text: 'remember this', tags: [] });
  const agentDir = path.join(root, 'agent-1');
  expect(await modeOf(root)).toBe(0o700);
  expect(await modeOf(agentDir)).toBe(0o700);
  const [note] = await readdir(agentDir);
  expect(await modeOf(path.join(agentDir, note!))).toBe(0o600);
});
