import { execFileSync } from 'node:child_process';
import { lookup } from 'node:dns/promises';
import { chmod, mkdir, readFile, stat, symlink, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { applyPatchTool } from '../../src/tools/builtin/apply-patch';
import { MAX_EDIT_BYTES, editTool } from '../../src/tools/builtin/edit';
import { globTool } from '../../src/tools/builtin/glob';
import { grepTool } from '../../src/tools/builtin/grep';
import { readTool } from '../../src/tools/builtin/read';
import { HeldDirectory } from '../../src/tools/held-directory';
import { readRegularFile } from '../../src/tools/builtin/safe-file';
import { Workspace } from '../../src/tools/workspace';
import { writeTool } from '../../src/tools/builtin/write';
import { makeTempDir, removeDir, resultText, runTool, toolErrorOf } from './tool-harness';

/**
 * What a model can name to block or exhaust the worker through a file tool: FIFOs and devices
 * (an open or read that never returns parks one of libuv's four pool threads), files too large to
 * hold, and regular expressions or globs that backtrack for minutes on the one JavaScript thread.
 * Each is answered promptly with a clear error; a test that regresses hangs until jest's timeout.
 */
let root: string;
let workspace: Workspace;

beforeEach(async () => {
  root = await makeTempDir('durable-agent-unit-files-hostile-');
  execFileSync('mkfifo', [path.join(root, 'pipe')]);
  await symlink('pipe', path.join(root, 'link-to-pipe'));
  await symlink('/dev/zero', path.join(root, 'zero'));
  await writeFile(path.join(root, 'plain.txt'), 'hello\n');
  workspace = new Workspace(root);
});

afterEach(async () => {
  await removeDir(root);
});

describe('a FIFO is refused, not waited on', () => {
  const FIFO_MESSAGE = /pipe is a FIFO, not a regular file/;

  test.each([
    ['read', () => runTool(readTool, workspace, { path: 'pipe' })],
    ['read through a link inside', () => runTool(readTool, workspace, { path: 'link-to-pipe' })],
    ['edit', () => runTool(editTool, workspace, { path: 'pipe', old_string: 'a', new_string: 'b' })],
    ['write', () => runTool(writeTool, workspace, { path: 'pipe', content: 'x' })],
    ['grep of the FIFO itself', () => runTool(grepTool, workspace, { pattern: 'x', path: 'pipe' })],
    [
      'apply_patch changing it',
      () => runTool(applyPatchTool, workspace, { patch: '--- a/pipe\n+++ b/pipe\n@@ -1 +1 @@\n-a\n+b\n' }),
    ],
    [
      'apply_patch deleting it',
      () => runTool(applyPatchTool, workspace, { patch: '--- a/pipe\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n' }),
    ],
  ])('%s: InvalidArgs saying it is a FIFO', async (_label, call) => {
    const error = await toolErrorOf(call());
    expect(error.kind).toBe('InvalidArgs');
    expect(error.message).toMatch(FIFO_MESSAGE);
    expect(error.message).toContain('regular file');
  });

  test('grep over a directory holding a FIFO skips it and searches the rest', async () => {
    const result = await runTool(grepTool, workspace, { pattern: 'hello' });
    expect(resultText(result)).toBe('plain.txt:1: hello');
  });

  test('write leaves the FIFO in place', async () => {
    await toolErrorOf(runTool(writeTool, workspace, { path: 'pipe', content: 'x' }));
    expect((await stat(path.join(root, 'pipe'))).isFIFO()).toBe(true);
  });

  test('four concurrent FIFO reads leave the thread pool free for files and DNS', async () => {
    const reads = await Promise.allSettled(
      [0, 1, 2, 3].map(() => runTool(readTool, workspace, { path: 'link-to-pipe' })),
    );
    expect(reads.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected', 'rejected', 'rejected']);
    // Both go through libuv's pool: with four threads parked on FIFOs they would never finish.
    expect(await readFile(path.join(root, 'plain.txt'), 'utf8')).toBe('hello\n');
    expect((await lookup('localhost')).address).toBeTruthy();
  });
});

describe('devices', () => {
  test('/dev/zero through a link in the workspace is refused as outside it', async () => {
    const error = await toolErrorOf(runTool(readTool, workspace, { path: 'zero' }));
    expect(error.kind).toBe('InvalidPath');
    expect(error.message).toContain('outside the workspace');
  });

  test('the regular-file reader refuses a character device without reading it', async () => {
    const dev = await HeldDirectory.open('/dev');
    const error = await toolErrorOf(
      readRegularFile({ dir: dev, name: 'zero', shown: 'zero' }, { maxBytes: 1_000, advice: '' }),
    ).finally(() => dev.close());
    expect(error.kind).toBe('InvalidArgs');
    expect(error.message).toBe(
      'zero is a character device, not a regular file; file tools read and write only regular files',
    );
  });
});

describe('size caps', () => {
  test('edit refuses a file over its cap, naming the cap and another way', async () => {
    // Sparse: its size is over the cap, but reading it would take a while and a lot of memory.
    await writeFile(path.join(root, 'big.txt'), '');
    await truncate(path.join(root, 'big.txt'), MAX_EDIT_BYTES + 1);
    const error = await toolErrorOf(
      runTool(editTool, workspace, { path: 'big.txt', old_string: 'a', new_string: 'b' }),
    );
    expect(error.kind).toBe('InvalidArgs');
    expect(error.message).toContain(`big.txt is ${MAX_EDIT_BYTES + 1} bytes`);
    expect(error.message).toContain(`at most ${MAX_EDIT_BYTES} bytes`);
    expect(error.message).toContain('exec');
  });

  test('apply_patch refuses a file over the same cap, and changes nothing', async () => {
    await writeFile(path.join(root, 'big.txt'), '');
    await truncate(path.join(root, 'big.txt'), MAX_EDIT_BYTES + 1);
    const error = await toolErrorOf(
      runTool(applyPatchTool, workspace, { patch: '--- a/big.txt\n+++ b/big.txt\n@@ -1 +1 @@\n-a\n+b\n' }),
    );
    expect(error.kind).toBe('InvalidArgs');
    expect(error.message).toContain(`at most ${MAX_EDIT_BYTES} bytes`);
    expect(error.message).toContain('no file was changed');
  });

  test('a file growing past the cap after its size was checked is still refused', async () => {
    await writeFile(path.join(root, 'grows.txt'), 'x'.repeat(100));
    const dir = await HeldDirectory.open(root);
    const error = await toolErrorOf(
      readRegularFile({ dir, name: 'grows.txt', shown: 'grows.txt' }, { maxBytes: 50, advice: 'Page it.' }),
    ).finally(() => dir.close());
    expect(error.message).toBe(
      'grows.txt is 100 bytes; this tool handles files of at most 50 bytes. Page it.',
    );
  });
});

describe('writes replace the file whole', () => {
  test('edit keeps the permission bits and leaves no temporary file', async () => {
    await writeFile(path.join(root, 'script.sh'), 'echo one\n');
    await chmod(path.join(root, 'script.sh'), 0o751);
    await runTool(editTool, workspace, { path: 'script.sh', old_string: 'one', new_string: 'two' });
    expect(await readFile(path.join(root, 'script.sh'), 'utf8')).toBe('echo two\n');
    expect((await stat(path.join(root, 'script.sh'))).mode & 0o7777).toBe(0o751);
    expect(execFileSync('ls', ['-A', root], { encoding: 'utf8' }).split('\n').filter(Boolean).sort()).toEqual(
      ['link-to-pipe', 'pipe', 'plain.txt', 'script.sh', 'zero'],
    );
  });

  test('write through a link inside the workspace changes the target, the link stays', async () => {
    await symlink('plain.txt', path.join(root, 'link-to-plain'));
    await runTool(writeTool, workspace, { path: 'link-to-plain', content: 'new\n' });
    expect(await readFile(path.join(root, 'plain.txt'), 'utf8')).toBe('new\n');
    expect(execFileSync('readlink', [path.join(root, 'link-to-plain')], { encoding: 'utf8' }).trim()).toBe(
      'plain.txt',
    );
  });

  test('write of a directory is refused clearly', async () => {
    await mkdir(path.join(root, 'dir'));
    const error = await toolErrorOf(runTool(writeTool, workspace, { path: 'dir', content: 'x' }));
    expect(error.kind).toBe('InvalidArgs');
    expect(error.message).toContain('dir is a directory, not a regular file');
  });
});

describe('grep runs in linear time and shares the thread', () => {
  const ADVERSARIAL = [
    'a'.repeat(95) + '!',
    'word '.repeat(20) + '!',
    'a'.repeat(120) + 'b',
    'abcdefghij'.repeat(10) + '!',
    'x'.repeat(200),
  ].join('\n');

  test.each(['(a+)+$', '(\\w+\\s?)*$', '(a|aa)+$', '([a-z]+)*[0-9]', '(.*a){20}'])(
    '%s over adversarial lines answers',
    async (pattern) => {
      await writeFile(path.join(root, 'evil.txt'), ADVERSARIAL);
      const result = await runTool(grepTool, workspace, { pattern, path: 'evil.txt' });
      expect(resultText(result)).not.toContain('error');
    },
  );

  test('the answers are the ones a backtracking engine would give', async () => {
    await writeFile(path.join(root, 'evil.txt'), ADVERSARIAL);
    const result = await runTool(grepTool, workspace, { pattern: '(\\w+\\s?)*$', path: 'evil.txt' });
    // Every line matches at its end (the empty match); only the lines printed are checked here.
    expect(resultText(result).split('\n')).toHaveLength(5);
    const none = await runTool(grepTool, workspace, { pattern: '([a-z]+)*[0-9]', path: 'evil.txt' });
    expect(resultText(none)).toBe('No matches.');
  });

  test('while grep matches a large file, timers fire and other file work finishes first', async () => {
    // Nearly 5 MB of distinct lines, none matching: every line is matched, for a while.
    const lines = Array.from({ length: 90_000 }, (_, index) => `line ${index.toString(36)} of words words`);
    await writeFile(path.join(root, 'large.txt'), lines.join('\n'));
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    const order: string[] = [];
    const grep = runTool(grepTool, workspace, { pattern: '([a-z]+ ?)*[0-9]{9}', path: 'large.txt' }).then(
      (result) => {
        order.push('grep');
        return result;
      },
    );
    const read = readFile(path.join(root, 'plain.txt'), 'utf8').then(() => order.push('readFile'));
    const [result] = await Promise.all([grep, read]);
    clearInterval(timer);
    expect(resultText(result)).toBe('No matches.');
    expect(order).toEqual(['readFile', 'grep']);
    expect(ticks).toBeGreaterThanOrEqual(3);
  });

  test.each([
    ['(a)\\1', 'backreferences'],
    ['(?<name>a)\\k<name>', 'backreferences'],
    ['(?=a)b', 'lookahead and lookbehind'],
    ['(?<!a)b', 'lookahead and lookbehind'],
  ])('%s is InvalidArgs naming the unsupported syntax and RE2', async (pattern, syntax) => {
    const error = await toolErrorOf(runTool(grepTool, workspace, { pattern }));
    expect(error.kind).toBe('InvalidArgs');
    expect(error.message).toContain(`${syntax} `);
    expect(error.message).toContain('RE2');
  });

  test('an escaped backslash before a digit is no backreference', async () => {
    await writeFile(path.join(root, 'win.txt'), 'C:\\1\n');
    const result = await runTool(grepTool, workspace, { pattern: '\\\\1', path: 'win.txt' });
    expect(resultText(result)).toBe('win.txt:1: C:\\1');
  });

  test('JavaScript spellings RE2 lacks still work: \\u escapes and named groups', async () => {
    const result = await runTool(grepTool, workspace, {
      pattern: '(?<greeting>\\u0068ello)',
      path: 'plain.txt',
    });
    expect(resultText(result)).toBe('plain.txt:1: hello');
  });

  test('a pattern compiling to a huge program is refused', async () => {
    const error = await toolErrorOf(
      runTool(grepTool, workspace, { pattern: 'a{1000}b{1000}c{1000}d{1000}e{1000}' }),
    );
    expect(error.kind).toBe('InvalidArgs');
    expect(error.message).toContain('too complex');
  });

  test('lines too long for the pattern are skipped and counted', async () => {
    await writeFile(path.join(root, 'wide.txt'), 'a'.repeat(5_000) + '\nshort a\n');
    const result = await runTool(grepTool, workspace, { pattern: 'a{1000}|a', path: 'wide.txt' });
    expect(resultText(result)).toMatch(
      /^wide\.txt:2: short a\n\[1 lines longer than \d+ characters were not searched/,
    );
  });
});

describe('globs that would backtrack are refused', () => {
  test.each([
    ['*a*a*a*ab', 'in one path segment'],
    ['**/a/**/a/**/b', '** segments'],
    ['*a/*a/*a/*a/*b', 'in all'],
    ['{1..100000}', 'range'],
    ['{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}', 'alternatives'],
    ['{a,{b,c}}', 'nested'],
  ])('%s', async (pattern, why) => {
    const error = await toolErrorOf(runTool(globTool, workspace, { pattern }));
    expect(error.kind).toBe('InvalidArgs');
    expect(error.message).toContain(why);
    const viaGrep = await toolErrorOf(runTool(grepTool, workspace, { pattern: 'a', glob: pattern }));
    expect(viaGrep.kind).toBe('InvalidArgs');
  });

  test.each(['src/**/*.ts', '**/*.{ts,tsx}', '**/test/**/*foo*', '*/*/*.ts', '**/*.test.ts'])(
    'everyday pattern %s is fine',
    async (pattern) => {
      const result = await runTool(globTool, workspace, { pattern });
      expect(resultText(result)).not.toContain('error');
    },
  );

  test('extglobs are literal text', async () => {
    await writeFile(path.join(root, 'aa.txt'), '');
    const result = await runTool(globTool, workspace, { pattern: '+(a|aa).txt' });
    expect(resultText(result)).toBe('No files matched.');
  });
});
