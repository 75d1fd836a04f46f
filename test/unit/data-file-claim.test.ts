import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { claimDataFile } from '../../src/temporal-server/data-file-claim';

async function dataFile(): Promise<string> {
  return path.join(await mkdtemp(path.join(os.tmpdir(), 'claim-')), 'temporal.db');
}

/** A live process that holds nothing but a pid, for `ms`. */
function holder(ms: number) {
  const child = spawn(process.execPath, ['-e', `setTimeout(() => {}, ${ms})`]);
  return {
    pid: child.pid!,
    exited: new Promise((resolve) => child.on('exit', resolve)),
    kill: () => child.kill(),
  };
}

const notServed = async () => false;

test('a free data file is claimed, the server recorded, and released', async () => {
  const file = await dataFile();
  const claim = await claimDataFile(file, { served: notServed, log: () => undefined });
  if (claim === 'served') throw new Error('unexpected');
  expect(JSON.parse(await readFile(`${file}.lock`, 'utf8'))).toEqual({ pid: process.pid });
  claim.recordServer(4242);
  expect(JSON.parse(await readFile(`${file}.lock`, 'utf8'))).toEqual({ pid: 4242 });
  claim.release();
  expect(existsSync(`${file}.lock`)).toBe(false);
});

test('a claim left by a process that is gone is taken over', async () => {
  const file = await dataFile();
  const gone = holder(0);
  await gone.exited;
  await writeFile(`${file}.lock`, JSON.stringify({ pid: gone.pid }));
  const claim = await claimDataFile(file, { served: notServed, log: () => undefined });
  expect(claim).not.toBe('served');
});

test('a server still stopping is waited for, saying so, and the file claimed once it has gone', async () => {
  const file = await dataFile();
  const stopping = holder(1_000);
  await writeFile(`${file}.lock`, JSON.stringify({ pid: stopping.pid }));
  const lines: string[] = [];
  const claim = await claimDataFile(file, { served: notServed, log: (line) => lines.push(line) });
  expect(claim).not.toBe('served');
  expect(lines).toEqual([expect.stringContaining(`pid ${stopping.pid}`)]);
  await stopping.exited;
});

test('a holder that neither answers nor stops is named after the wait', async () => {
  const file = await dataFile();
  const stuck = holder(30_000);
  try {
    await writeFile(`${file}.lock`, JSON.stringify({ pid: stuck.pid }));
    await expect(
      claimDataFile(file, { served: notServed, log: () => undefined, timeoutMs: 500 }),
    ).rejects.toThrow(`held by process ${stuck.pid}`);
  } finally {
    stuck.kill();
  }
});

test('a holder that answers is a server to use, not one to wait for', async () => {
  const file = await dataFile();
  const serving = holder(30_000);
  try {
    await writeFile(`${file}.lock`, JSON.stringify({ pid: serving.pid }));
    expect(await claimDataFile(file, { served: async () => true, log: () => undefined })).toBe('served');
  } finally {
    serving.kill();
  }
});

test('a server told to stop is waited for even while it still answers', async () => {
  const file = await dataFile();
  const stopping = holder(800);
  await writeFile(`${file}.lock`, JSON.stringify({ pid: stopping.pid, stopping: true }));
  const claim = await claimDataFile(file, { served: async () => true, log: () => undefined });
  expect(claim).not.toBe('served');
  await stopping.exited;
});
