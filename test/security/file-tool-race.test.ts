import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { applyPatchTool } from '../../src/tools/builtin/apply-patch';
import { editTool } from '../../src/tools/builtin/edit';
import { globTool } from '../../src/tools/builtin/glob';
import { grepTool } from '../../src/tools/builtin/grep';
import { listDirectoryTool } from '../../src/tools/builtin/list-directory';
import { readTool } from '../../src/tools/builtin/read';
import { Workspace } from '../../src/tools/workspace';
import { writeTool } from '../../src/tools/builtin/write';
import { sandboxAvailability } from '../../src/tools/exec/bubblewrap';
import { BackgroundProcesses } from '../../src/tools/exec/background-processes';
import { childEnvironment } from '../../src/tools/exec/child-environment';
import { createExecTool } from '../../src/tools/exec/exec';
import { CommandPolicy } from '../../src/tools/exec/exec-policy';
import type { AgentTool } from '../../src/tools/tool';
import { filesHolding, snapshot } from '../support/directory-contents';
import { inCi } from '../support/in-ci';
import { startSwapper } from '../support/path-swapper';
import { makeTempDir, removeDir, resultText, runTool } from '../unit/tool-harness';

/**
 * The file tools against a command that swaps a workspace directory (or the file itself) for a
 * symbolic link to a directory outside and back, thousands of times while the tools run: the check
 * that a path lies inside and the use of it must be one, or a tool reads, writes or lists outside.
 * The command runs inside bubblewrap as `exec` runs a sandboxed one (outside it where bubblewrap is
 * missing, except in CI, where its absence fails the run).
 */
jest.setTimeout(600_000);

const SWAPS_PER_TOOL = 2_000;
const MIN_CALLS = 200;
const IN_FLIGHT = 6;
/** A tool that cannot see 2,000 swaps in this long fails the test rather than hang. */
const MAX_MS_PER_CASE = 120_000;
const SECRET = `OUTSIDE-SECRET-${process.pid}`;

const sandbox = sandboxAvailability();
if (!sandbox.ok && inCi()) throw new Error(`bubblewrap is required in CI: ${sandbox.reason}`);
if (!sandbox.ok) console.warn(`the swapping command runs unsandboxed: ${sandbox.reason}`);

let parent: string;
let root: string;
let outside: string;
let workspace: Workspace;
let outsideBefore: string;
let parentBefore: string[];
let workspaces = 0;

beforeAll(async () => {
  parent = await makeTempDir('durable-agent-race-');
  outside = path.join(parent, 'outside');
  await mkdir(outside);
  // The outside file holds what an edit looks for, so an edit that escaped would change it.
  await writeFile(path.join(outside, 'target.txt'), `inside ${SECRET}\n`);
  await writeFile(path.join(outside, 'only-outside.txt'), `${SECRET}\n`);
  outsideBefore = await snapshot(outside);
});

/** A fresh workspace for each race: what one tool wrote does not stand in the next one's way. */
beforeEach(async () => {
  root = path.join(parent, `ws-${++workspaces}`);
  await mkdir(path.join(root, 'sub'), { recursive: true });
  await writeFile(path.join(root, 'sub', 'target.txt'), 'inside\n');
  await writeFile(path.join(root, 'sub', 'inner-only.txt'), 'inner\n');
  workspace = new Workspace(root);
  parentBefore = (await readdir(parent)).sort();
});

afterAll(async () => {
  await removeDir(parent);
});

interface RaceCase {
  tool: AgentTool;
  args: (call: number) => Record<string, unknown>;
  /** What the swap targets: the directory `sub`, or the file `sub/target.txt`. */
  swap: 'directory' | 'file';
}

let counter = 0;
/** safe-bin checks a command's paths, then the program opens them itself: the same race, one level down. */
const safeBinExec = createExecTool({
  policy: new CommandPolicy({ security: 'safe-bin' }),
  processes: new BackgroundProcesses(),
  env: childEnvironment(process.env),
}) as AgentTool;
const cases: Array<[string, RaceCase]> = [
  [
    'read, directory swapped',
    { tool: readTool, swap: 'directory', args: () => ({ path: 'sub/target.txt' }) },
  ],
  ['read, file swapped', { tool: readTool, swap: 'file', args: () => ({ path: 'sub/target.txt' }) }],
  [
    'write, directory swapped',
    {
      tool: writeTool,
      swap: 'directory',
      args: (call) => ({ path: call % 2 ? 'sub/target.txt' : `sub/new-${call}.txt`, content: 'inside\n' }),
    },
  ],
  [
    'write, file swapped',
    { tool: writeTool, swap: 'file', args: () => ({ path: 'sub/target.txt', content: 'inside\n' }) },
  ],
  [
    'edit, directory swapped',
    {
      tool: editTool,
      swap: 'directory',
      args: () => ({ path: 'sub/target.txt', old_string: 'inside', new_string: 'inside' }),
    },
  ],
  [
    'edit, file swapped',
    {
      tool: editTool,
      swap: 'file',
      args: () => ({ path: 'sub/target.txt', old_string: 'inside', new_string: 'inside' }),
    },
  ],
  [
    'apply_patch, directory swapped',
    {
      tool: applyPatchTool,
      swap: 'directory',
      args: () => ({
        patch: `--- /dev/null\n+++ b/sub/added-${counter++}.txt\n@@ -0,0 +1 @@\n+added\n`,
      }),
    },
  ],
  [
    'apply_patch, file swapped',
    {
      tool: applyPatchTool,
      swap: 'file',
      args: () => ({
        patch: '--- a/sub/target.txt\n+++ b/sub/target.txt\n@@ -1 +1 @@\n-inside\n+inside\n',
      }),
    },
  ],
  [
    'list_directory, directory swapped',
    { tool: listDirectoryTool, swap: 'directory', args: () => ({ path: 'sub' }) },
  ],
  ['glob, directory swapped', { tool: globTool, swap: 'directory', args: () => ({ pattern: 'sub/**' }) }],
  [
    'glob from the directory, swapped',
    { tool: globTool, swap: 'directory', args: () => ({ pattern: '*', path: 'sub' }) },
  ],
  [
    'grep, directory swapped',
    { tool: grepTool, swap: 'directory', args: () => ({ pattern: 'SECRET|inside', path: 'sub' }) },
  ],
  [
    'grep, file swapped',
    { tool: grepTool, swap: 'file', args: () => ({ pattern: 'SECRET', path: 'sub/target.txt' }) },
  ],
  [
    'exec in safe-bin mode, directory swapped',
    {
      tool: safeBinExec,
      swap: 'directory',
      args: (call) => ({ command: call % 2 ? 'cat sub/target.txt' : 'ls sub' }),
    },
  ],
];

test.each(cases)('%s: nothing outside is read, listed, written or changed', async (_label, race) => {
  const swapped = race.swap === 'directory' ? path.join(root, 'sub') : path.join(root, 'sub', 'target.txt');
  const aside =
    race.swap === 'directory' ? path.join(root, '.sub-aside') : path.join(root, 'sub', '.target-aside');
  const linkTarget = race.swap === 'directory' ? outside : path.join(outside, 'target.txt');
  const swapper = startSwapper({ workspace: root, swapped, aside, linkTarget, sandboxed: sandbox.ok });
  const escapes: string[] = [];
  const errors = new Map<string, number>();
  let calls = 0;
  let answered = 0;
  const started = Date.now();
  // Wait for the swapping to be under way, so every call meets it.
  while (swapper.swaps() === 0 && Date.now() - started < 10_000) await new Promise((r) => setTimeout(r, 5));
  const swapsAtStart = swapper.swaps();
  try {
    const worker = async () => {
      while (
        (calls < MIN_CALLS || swapper.swaps() - swapsAtStart < SWAPS_PER_TOOL) &&
        Date.now() - started < MAX_MS_PER_CASE
      ) {
        const call = calls++;
        try {
          const text = resultText(await runTool(race.tool, workspace, race.args(call)));
          answered++;
          if (text.includes(SECRET) || text.includes('only-outside')) escapes.push(text.slice(0, 200));
        } catch (error) {
          // A refusal ("changed while it was being opened", not found) is fine; what matters is where it went.
          const message = (error as Error).message.replace(/\d+/g, 'N').slice(0, 80);
          errors.set(message, (errors.get(message) ?? 0) + 1);
          // Nor may a refusal show the worker's descriptors or where the workspace lies on its disk.
          const { message: text } = error as Error;
          if (text.includes(SECRET) || text.includes('/proc/self/fd') || text.includes(parent))
            escapes.push(text);
        }
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  } finally {
    await swapper.stop();
  }
  const swaps = swapper.swaps() - swapsAtStart;
  console.log(
    `${_label}: ${calls} calls, ${answered} answered, ${swaps} swaps in ${Date.now() - started} ms; refusals: ${JSON.stringify([...errors])}`,
  );
  expect({ escapes, swapsEnough: swaps >= SWAPS_PER_TOOL }).toEqual({ escapes: [], swapsEnough: true });
  // The race was real: calls ran while the path changed under them, and some still got through.
  expect(answered).toBeGreaterThan(0);
  expect(await snapshot(outside)).toBe(outsideBefore);
  // Nor did outside content come in: an edit that read outside would write it back inside.
  expect(await filesHolding(root, SECRET)).toEqual([]);
  expect((await readdir(parent)).sort()).toEqual(parentBefore);
});
