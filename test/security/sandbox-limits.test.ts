import { randomInt, randomUUID } from 'node:crypto';
import { readFileSync, readdirSync, statfsSync } from 'node:fs';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import nock from 'nock';
import type { ExecSecurityMode } from '../../src/shared/exec-security';
import { MAX_TOOL_RESULT_BYTES } from '../../src/shared/constants';
import { builtinTools } from '../../src/tools/builtin/builtin-tools';
import { MemoryStore } from '../../src/tools/builtin/memory-store';
import { DEFAULT_SANDBOX_SETTINGS } from '../../src/tools/exec/bubblewrap';
import { commandCgroupsFor, processLimitStatus } from '../../src/tools/exec/command-cgroups';
import { ToolRegistry } from '../../src/tools/registry';
import { ask } from '../support/ask';
import { NOCK_MODEL_URL, nockModel } from '../support/nock-model';
import { sandboxForTests } from '../support/sandbox-for-tests';
import { type ScriptStep, type ScriptedToolCall, toolResultIn } from '../support/scripted-model';
import { type TestHarness, startHarness } from '../support/test-worker';

/**
 * Limits that bind as root, through a real worker: a command's process limit, its membership of
 * its run (nothing it starts outlives it, however it hides), a bounded sandbox /tmp, a disk quota,
 * and output whose end always reaches the model.
 */
jest.setTimeout(240_000);

const PROCESS_LIMIT = 48;
const TMP_MB = 16;
const DISK_QUOTA_MB = 64;
/**
 * What the disk may take beyond the quota before the watchdog's next look (every 100 ms) and the
 * kill land; this disk writes a few hundred MB/s into the page cache, and other test runs share it.
 */
const DISK_SLACK_MB = 192;

const sandboxed = sandboxForTests('the sandbox limit tests');
const whenSandboxed = sandboxed ? test : test.skip;

/** The status of this machine's cgroups for commands, made as the worker makes them. */
const limitStatus = processLimitStatus(commandCgroupsFor('auto'));
/** Tests of what only a cgroup gives fail here, saying what is missing, rather than pass by luck. */
function requireCgroup(): void {
  if (!commandCgroupsFor('auto').cgroups) {
    throw new Error(
      `no writable cgroup for commands on this machine, so nothing keeps a process that drops the run's mark from outliving its command: ${limitStatus.text}`,
    );
  }
}
function requireBindingProcessLimit(): void {
  if (!limitStatus.binds) {
    throw new Error(`the process limit cannot bind on this machine: ${limitStatus.text}`);
  }
}

/** The worker most tests use; its disk limits are the defaults, so other writers on this disk do not stop them. */
let harness: TestHarness;
/** A worker whose commands may consume only DISK_QUOTA_MB of disk. */
let diskHarness: TestHarness;
let memoryDir: string;

async function startLimitedHarness(disk: { quotaMb: number; reserveMb: number } | undefined) {
  const tools = builtinTools({
    memory: new MemoryStore(memoryDir),
    runtime: {
      security: 'full',
      sandbox: { ...DEFAULT_SANDBOX_SETTINGS, processes: PROCESS_LIMIT, tmpMb: TMP_MB },
      limits: { cgroup: 'auto', ...(disk ? { disk } : {}) },
    },
  });
  return startHarness({ modelBaseUrl: NOCK_MODEL_URL, registry: new ToolRegistry(tools) });
}

beforeAll(async () => {
  nock.disableNetConnect();
  nock.enableNetConnect(/127\.0\.0\.1|localhost/);
  memoryDir = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-limits-memory-'));
  harness = await startLimitedHarness(undefined);
  diskHarness = await startLimitedHarness({ quotaMb: DISK_QUOTA_MB, reserveMb: 0 });
});
afterAll(async () => {
  killAllMarked();
  await harness?.close();
  await diskHarness?.close();
  await rm(memoryDir, { recursive: true, force: true });
  nock.cleanAll();
  nock.enableNetConnect();
});
afterEach(() => {
  nock.cleanAll();
  // Whatever a failing test left is killed here, so one failure does not load the machine for the rest.
  killAllMarked();
});

/** Every sleep a test starts takes a duration only this file run uses, so /proc tells its processes apart. */
const RUN_TAG = `${randomInt(100_000, 999_999)}${process.pid}`;
let sleeps = 0;
const uniqueSleep = () => `300.${RUN_TAG}${String(++sleeps).padStart(3, '0')}`;

/**
 * Live processes (zombies excluded) whose command line contains `needle`: with `whole`, as one of
 * its arguments (the sleep itself, not the shell whose command text names it).
 */
function processesWith(needle: string, whole = false): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`);
      if (whole ? !cmdline.toString().split('\0').includes(needle) : !cmdline.includes(needle)) continue;
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (state !== 'Z' && state !== 'X') found.push(Number(name));
    } catch {
      // It ended while being read.
    }
  }
  return found;
}

/** The sleeps started with duration `sleep` that still run. */
const sleepsOf = (sleep: string) => processesWith(sleep, true);

function killAllMarked(): void {
  for (const pid of processesWith(`300.${RUN_TAG}`)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
}

/**
 * One conversation in `mode` whose model makes `calls` at once, then `then` steps, then ends.
 * Returns each call's result as the model read it, by call id.
 */
async function converse(
  mode: ExecSecurityMode,
  calls: ScriptedToolCall[],
  then: ScriptStep[] = [],
  worker: TestHarness = harness,
): Promise<{ results: Map<string, string>; requests: ReturnType<typeof nockModel>['requests'] }> {
  const script = nockModel([{ toolCalls: calls }, ...then, { text: 'done' }]);
  const { finished } = await ask(worker.agent, `conv-limits-${randomUUID()}`, 'go', {
    options: { approval: { mode: 'auto' }, execSecurity: mode },
  });
  expect(finished).toMatchObject({ outcome: 'answered' });
  const results = new Map<string, string>();
  for (const request of script.requests.slice(1)) {
    for (const message of request.messages) {
      if (message.role === 'tool' && message.tool_call_id && typeof message.content === 'string') {
        results.set(message.tool_call_id, message.content);
      }
    }
  }
  return { results, requests: script.requests };
}

const exec = (id: string, command: string, extra: Record<string, unknown> = {}): ScriptedToolCall => ({
  id,
  name: 'exec',
  arguments: { command, ...extra },
});

/** The free space of the file system `dir` is on, in MiB. */
function freeMb(dir: string): number {
  const stats = statfsSync(dir);
  return (stats.bavail * stats.bsize) / 1024 / 1024;
}

/** Bytes of the files in `dir`, in MiB. */
async function filesMb(dir: string): Promise<number> {
  let bytes = 0;
  for (const name of await readdir(dir).catch(() => [])) bytes += (await stat(path.join(dir, name))).size;
  return bytes / 1024 / 1024;
}

describe('the process limit holds as root', () => {
  const bombs: Array<[string, (sleep: string) => string]> = [
    ['a loop of background sleeps', (sleep) => `for i in $(seq 500); do sleep ${sleep} & done; wait`],
    [
      'a function that forks itself twice per call (2^8 leaves)',
      (sleep) => `b() { [ \${#1} -lt 8 ] && { b x$1 & b x$1 & }; sleep ${sleep}; }; b; wait`,
    ],
    ['xargs starting 400 at once', (sleep) => `seq 400 | xargs -P 400 -I{} sleep ${sleep}`],
  ];

  whenSandboxed.each(bombs)(
    'sandbox mode: %s stays at the pids limit, the worker stays responsive, and nothing is left',
    async (_what, bomb) => {
      requireBindingProcessLimit();
      const sleep = uniqueSleep();
      let most = 0;
      let sampling = true;
      // Every process of the bomb carries the sleep's duration in its command line (bubblewrap's and
      // bash's own ones too), and all of them count against the limit. Sampled until the bomb is killed.
      const sampler = (async () => {
        while (sampling) {
          most = Math.max(most, processesWith(sleep).length);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      })();
      let processId = '';
      let askedAt = 0;
      let answeredIn = Infinity;
      let left: number[] = [];
      try {
        const { results } = await converse(
          'sandbox',
          [exec('call_bomb', bomb(sleep), { background: true, timeout: 120 })],
          [
            (request) => {
              processId = /background process (\S+)/.exec(toolResultIn(request, 'call_bomb'))![1]!;
              // Time for the bomb to reach the limit.
              return {
                toolCalls: [
                  { id: 'call_wait', name: 'process', arguments: { action: 'poll', id: processId, wait: 4 } },
                ],
              };
            },
            () => {
              askedAt = Date.now();
              return { toolCalls: [exec('call_alive', 'echo alive')] };
            },
            () => {
              answeredIn = Date.now() - askedAt;
              return {
                toolCalls: [
                  {
                    id: 'call_kill',
                    name: 'process',
                    arguments: { action: 'kill', id: processId, signal: 'SIGKILL' },
                  },
                ],
              };
            },
            () => {
              left = processesWith(sleep);
              return { text: 'killed' };
            },
          ],
        );
        // While the bomb runs, the worker still runs another command promptly.
        expect(results.get('call_alive')).toBe('exit code 0\nalive\n');
        expect(answeredIn).toBeLessThan(20_000);
        expect(results.get('call_kill')).toMatch(/killed by SIGKILL, killed on request/);
      } finally {
        sampling = false;
        await sampler;
      }
      expect(most).toBeGreaterThan(PROCESS_LIMIT / 2);
      expect(most).toBeLessThanOrEqual(PROCESS_LIMIT);
      expect(left).toEqual([]);
    },
  );
});

describe('nothing a command starts outlives it, however it hides', () => {
  // Each waits a moment before it ends, so the escaped process is settled (out of the session, its
  // environment gone, its parent dead) before the command's end is handled.
  const escapes: Array<[string, (sleep: string) => string]> = [
    ['setsid env -i', (sleep) => `setsid env -i sleep ${sleep} & sleep 0.5; echo started`],
    [
      'nohup setsid sh -c exec env -i',
      (sleep) => `nohup setsid sh -c 'exec env -i sleep ${sleep}' > /dev/null 2>&1 & sleep 0.5; echo started`,
    ],
    [
      'a double fork into a new session',
      (sleep) => `( setsid sh -c 'env -i sleep ${sleep} > /dev/null 2>&1 &' & ); sleep 0.5; echo started`,
    ],
    [
      'setsid -f env -i ignoring SIGTERM',
      (sleep) =>
        `setsid -f env -i sh -c 'trap "" TERM; exec sleep ${sleep}' > /dev/null 2>&1; sleep 0.5; echo started`,
    ],
  ];
  const modes: ExecSecurityMode[] = ['full', 'sandbox'];
  const cases = modes.flatMap((mode) => escapes.map(([what, command]) => [mode, what, command] as const));

  test.each(cases)('%s mode: %s, gone when the command returns', async (mode, _what, spelling) => {
    if (mode === 'sandbox' && !sandboxed) return;
    requireCgroup();
    const sleep = uniqueSleep();
    const { results } = await converse(mode, [exec('call_escape', spelling(sleep))]);
    expect(results.get('call_escape')).toBe('exit code 0\nstarted\n');
    expect(sleepsOf(sleep)).toEqual([]);
  });

  test.each(modes)(
    '%s mode: a background command killed with the process tool takes its escaped processes with it',
    async (mode) => {
      if (mode === 'sandbox' && !sandboxed) return;
      requireCgroup();
      const [first, second] = [uniqueSleep(), uniqueSleep()];
      let processId = '';
      let running: number[] = [];
      const command = `setsid env -i sleep ${first} & ( setsid sh -c 'env -i sleep ${second} > /dev/null 2>&1 &' & ); echo started; sleep 600`;
      const { results } = await converse(
        mode,
        [exec('call_start', command, { background: true })],
        [
          (request) => {
            processId = /background process (\S+)/.exec(toolResultIn(request, 'call_start'))![1]!;
            return {
              toolCalls: [
                { id: 'call_poll', name: 'process', arguments: { action: 'poll', id: processId, wait: 10 } },
              ],
            };
          },
          () => {
            // The second sleep is double-forked: give it a moment (bounded) to be there.
            const pause = new Int32Array(new SharedArrayBuffer(4));
            for (let tries = 0; tries < 100; tries++) {
              running = [...sleepsOf(first), ...sleepsOf(second)];
              if (running.length >= 2) break;
              Atomics.wait(pause, 0, 0, 50);
            }
            return {
              toolCalls: [{ id: 'call_kill', name: 'process', arguments: { action: 'kill', id: processId } }],
            };
          },
        ],
      );
      expect(results.get('call_poll')).toMatch(/started/);
      expect(running).toHaveLength(2);
      expect(results.get('call_kill')).toMatch(/killed on request/);
      expect([...sleepsOf(first), ...sleepsOf(second)]).toEqual([]);
    },
  );
});

describe('the sandbox /tmp is bounded', () => {
  // Each under the sandbox's 1 GiB file size limit, so the tmpfs size is what stops it. The least
  // each leaves in /tmp shows it filled it (fallocate takes all or nothing).
  const half = (TMP_MB / 2) * 1024 * 1024;
  const fills: Array<[string, string, number]> = [
    ['head -c 512M /dev/zero', 'head -c 512M /dev/zero > /tmp/x', half],
    ['cat /dev/zero', 'cat /dev/zero | head -c 900M > /tmp/x', half],
    ['fallocate -l 512M', 'fallocate -l 512M /tmp/x', 0],
    [
      'many 1 MiB files',
      'failed=0; for i in $(seq 200); do head -c 1M /dev/zero > /tmp/f$i || failed=1; done; [ $failed = 0 ]',
      half,
    ],
  ];

  whenSandboxed.each(fills)('%s runs out of space at the configured size', async (_what, fill, least) => {
    const command = `${fill}; echo "status $?"; find /tmp -type f -exec cat {} + | wc -c`;
    const { results } = await converse('sandbox', [exec('call_fill', command)]);
    const text = results.get('call_fill')!;
    expect(text).toMatch(/No space left on device/);
    expect(text).toMatch(/status [1-9]/);
    const stored = Number(/(\d+)\n$/.exec(text)?.[1]);
    expect(stored).toBeGreaterThanOrEqual(least);
    expect(stored).toBeLessThanOrEqual(TMP_MB * 1024 * 1024);
  });
});

describe('a command that fills the disk is stopped at its quota', () => {
  const writers: Array<[ExecSecurityMode, string, string]> = [
    ['full', '2000 files of 1 MiB', 'for i in $(seq 2000); do head -c 1M /dev/zero > f$i || exit 1; done'],
    ['sandbox', 'split into 1 MiB pieces', 'head -c 2000M /dev/zero | split -b 1M - part.'],
    ['full', '4 writers at once', `seq 2000 | xargs -P 4 -I{} sh -c 'head -c 1M /dev/zero > g{}'`],
  ];

  test.each(writers)('%s mode: %s', async (mode, _what, writer) => {
    if (mode === 'sandbox' && !sandboxed) return;
    const dir = path.join(diskHarness.workspace, `disk-${randomUUID().slice(0, 8)}`);
    const before = freeMb(diskHarness.workspace);
    try {
      const { results } = await converse(
        mode,
        [
          exec('call_fill', `mkdir ${dir} && cd ${dir} && ${writer}; echo finished`, {
            timeout: 120,
          }),
        ],
        [],
        diskHarness,
      );
      const consumed = before - freeMb(diskHarness.workspace);
      const written = await filesMb(dir);
      const text = results.get('call_fill')!;
      expect(text.startsWith(`stopped: the command wrote more than ${DISK_QUOTA_MB} MB to disk`)).toBe(true);
      expect(text).not.toContain('finished');
      expect(written).toBeGreaterThan(DISK_QUOTA_MB / 2);
      expect(written).toBeLessThanOrEqual(DISK_QUOTA_MB + DISK_SLACK_MB);
      expect(consumed).toBeLessThanOrEqual(DISK_QUOTA_MB + DISK_SLACK_MB);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('a background command is stopped too, and its poll says why', async () => {
    const dir = path.join(diskHarness.workspace, `disk-${randomUUID().slice(0, 8)}`);
    let processId = '';
    try {
      const { results } = await converse(
        'full',
        [
          exec(
            'call_start',
            `mkdir ${dir} && cd ${dir} && for i in $(seq 2000); do head -c 1M /dev/zero > f$i || exit 1; done`,
            { background: true },
          ),
        ],
        [
          (request) => {
            processId = /background process (\S+)/.exec(toolResultIn(request, 'call_start'))![1]!;
            return {
              toolCalls: [
                { id: 'call_wait', name: 'process', arguments: { action: 'poll', id: processId, wait: 30 } },
              ],
            };
          },
          () => ({
            toolCalls: [
              { id: 'call_poll', name: 'process', arguments: { action: 'poll', id: processId, wait: 30 } },
            ],
          }),
        ],
        diskHarness,
      );
      const seen = `${results.get('call_wait')}\n${results.get('call_poll')}`;
      expect(seen).toContain(`stopped: the command wrote more than ${DISK_QUOTA_MB} MB to disk`);
      expect(await filesMb(dir)).toBeLessThanOrEqual(DISK_QUOTA_MB + DISK_SLACK_MB);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("a command's long output keeps its end", () => {
  const MARKER = 'FINAL-LINE-MARKER';
  const outputs: Array<[ExecSecurityMode, string, string, Record<string, unknown>]> = [
    ['full', 'stdout', `seq 1 2000000; echo ${MARKER}`, {}],
    ['full', 'stderr and a failing exit', `seq 1 2000000 >&2; echo ${MARKER} >&2; exit 3`, {}],
    ['full', 'a timeout', `seq 1 2000000; echo ${MARKER}; sleep 60`, { timeout: 5 }],
    ['full', 'bytes that are not UTF-8', `head -c 300000 /dev/urandom; echo; echo ${MARKER}`, {}],
    ['full', 'multi-byte characters', `yes 'é€😀' | head -c 400000; echo; echo ${MARKER}`, {}],
    ['sandbox', 'stdout', `seq 1 2000000; echo ${MARKER}`, {}],
  ];

  test.each(outputs)('%s mode: %s', async (mode, _what, command, extra) => {
    if (mode === 'sandbox' && !sandboxed) return;
    const { results } = await converse(mode, [exec('call_out', command, extra)]);
    const text = results.get('call_out')!;
    expect(text).toContain(MARKER);
    expect(text).toMatch(/bytes of output omitted/);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(MAX_TOOL_RESULT_BYTES + 16_384);
  });

  test('a poll of output that is not UTF-8 fits the result limit and still says there is more', async () => {
    let processId = '';
    const { results } = await converse(
      'full',
      [exec('call_start', 'head -c 300000 /dev/urandom; echo; echo done', { background: true })],
      [
        (request) => {
          processId = /background process (\S+)/.exec(toolResultIn(request, 'call_start'))![1]!;
          return {
            toolCalls: [
              { id: 'call_poll', name: 'process', arguments: { action: 'poll', id: processId, wait: 10 } },
            ],
          };
        },
      ],
    );
    const text = results.get('call_poll')!;
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(MAX_TOOL_RESULT_BYTES);
    expect(text).toMatch(/\[\d+ more bytes: poll again\]$/);
  });
});
