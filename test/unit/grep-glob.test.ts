import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { assertContainedPattern, globTool } from '../../src/tools/builtin/glob';
import { grepTool } from '../../src/tools/builtin/grep';
import { ToolError } from '../../src/tools/tool-error';
import { Workspace } from '../../src/tools/workspace';
import { makeTempDir, removeDir, resultText, runTool, toolErrorOf } from './tool-harness';

let parent: string;
let root: string;
let workspace: Workspace;

const put = async (relative: string, content: string | Buffer) => {
  const file = path.join(root, relative);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, content);
};

beforeEach(async () => {
  parent = await makeTempDir('durable-agent-unit-search-');
  root = path.join(parent, 'ws');
  await mkdir(root);
  workspace = new Workspace(root);
  await put('src/a.ts', 'import x;\nconst needle = 1;\nconst other = 2;\n');
  await put('src/b.js', 'let Needle = 3;\n// needle again\n');
  await put('src/deep/c.ts', 'export const needleDeep = true;\n');
  await put('notes.txt', 'no match here\n');
  await put('node_modules/pkg/index.ts', 'const needle = "vendored";\n');
  await put('.git/config', 'needle in git\n');
  await put('bin.dat', Buffer.concat([Buffer.from('needle binary\n'), Buffer.from([0, 1, 2])]));
});

afterEach(async () => {
  await removeDir(parent);
});

describe('grep', () => {
  test('returns "path:line: text" for each match, files in sorted order', async () => {
    const result = await runTool(grepTool, workspace, { pattern: 'needle' });
    expect(resultText(result).split('\n')).toEqual([
      'src/a.ts:2: const needle = 1;',
      'src/b.js:2: // needle again',
      'src/deep/c.ts:1: export const needleDeep = true;',
    ]);
    expect(result.details).toMatchObject({ matches: 3 });
  });

  test('skips node_modules, .git and binary files', async () => {
    const text = resultText(await runTool(grepTool, workspace, { pattern: 'needle' }));
    expect(text).not.toContain('node_modules');
    expect(text).not.toContain('.git');
    expect(text).not.toContain('bin.dat');
  });

  test('ignore_case matches regardless of case', async () => {
    const sensitive = resultText(await runTool(grepTool, workspace, { pattern: 'Needle' }));
    expect(sensitive).toBe('src/b.js:1: let Needle = 3;');
    const insensitive = resultText(
      await runTool(grepTool, workspace, { pattern: 'Needle', ignore_case: true, path: 'src/b.js' }),
    );
    expect(insensitive).toBe('src/b.js:1: let Needle = 3;\nsrc/b.js:2: // needle again');
  });

  test('the pattern is a regular expression', async () => {
    const text = resultText(await runTool(grepTool, workspace, { pattern: '^const \\w+ = \\d;$' }));
    expect(text).toBe('src/a.ts:2: const needle = 1;\nsrc/a.ts:3: const other = 2;');
  });

  test('max_results caps the matches and says so', async () => {
    const result = await runTool(grepTool, workspace, { pattern: 'needle', max_results: 2 });
    expect(resultText(result)).toBe(
      'src/a.ts:2: const needle = 1;\nsrc/b.js:2: // needle again\n[stopped at 2 matches]',
    );
    // Scanning stops with the file that reached the cap: bin.dat, notes.txt, src/a.ts, src/b.js.
    expect(result.details).toEqual({ matches: 2, filesScanned: 4 });
  });

  test('max_results caps matches within a single file too', async () => {
    await put('many.txt', Array.from({ length: 50 }, (_, index) => `hit ${index}`).join('\n'));
    const text = resultText(
      await runTool(grepTool, workspace, { pattern: 'hit', path: 'many.txt', max_results: 3 }),
    );
    expect(text).toBe('many.txt:1: hit 0\nmany.txt:2: hit 1\nmany.txt:3: hit 2\n[stopped at 3 matches]');
  });

  test('the glob filter restricts which files are searched', async () => {
    const text = resultText(await runTool(grepTool, workspace, { pattern: 'needle', glob: '**/*.ts' }));
    expect(text).toBe('src/a.ts:2: const needle = 1;\nsrc/deep/c.ts:1: export const needleDeep = true;');
  });

  test('path restricts the search to a directory; results stay workspace-relative', async () => {
    const text = resultText(await runTool(grepTool, workspace, { pattern: 'needle', path: 'src/deep' }));
    expect(text).toBe('src/deep/c.ts:1: export const needleDeep = true;');
  });

  test('path may name a single file', async () => {
    const text = resultText(await runTool(grepTool, workspace, { pattern: 'const', path: 'src/a.ts' }));
    expect(text).toBe('src/a.ts:2: const needle = 1;\nsrc/a.ts:3: const other = 2;');
  });

  test('no matches says so', async () => {
    const result = await runTool(grepTool, workspace, { pattern: 'zzz-not-there' });
    expect(resultText(result)).toBe('No matches.');
    expect(result.details).toMatchObject({ matches: 0 });
  });

  test('long lines are cut to 300 characters', async () => {
    await put('long.txt', `needle${'x'.repeat(1_000)}`);
    const text = resultText(await runTool(grepTool, workspace, { pattern: 'needle', path: 'long.txt' }));
    expect(text).toBe(`long.txt:1: needle${'x'.repeat(294)}`);
  });

  test('an invalid regular expression is InvalidArgs', async () => {
    const error = await toolErrorOf(runTool(grepTool, workspace, { pattern: '(unclosed' }));
    expect(error.kind).toBe('InvalidArgs');
    expect(error.message).toContain('invalid regular expression');
  });

  test('a missing path is FileNotFound', async () => {
    const error = await toolErrorOf(runTool(grepTool, workspace, { pattern: 'x', path: 'does/not/exist' }));
    expect(error.kind).toBe('FileNotFound');
  });

  test('does not read a symlinked file that points outside the workspace', async () => {
    await writeFile(path.join(parent, 'secret.txt'), 'needle SECRET outside\n');
    await mkdir(path.join(parent, 'outdir'));
    await writeFile(path.join(parent, 'outdir', 'inner.txt'), 'needle SECRET in outdir\n');
    await symlink(path.join(parent, 'secret.txt'), path.join(root, 'leak.txt'));
    await symlink(path.join(parent, 'outdir'), path.join(root, 'leakdir'));
    for (const args of [
      { pattern: 'SECRET' },
      { pattern: 'SECRET', glob: '**/*' },
      { pattern: 'SECRET', glob: 'leakdir/*' },
      { pattern: 'SECRET', glob: 'leak.txt' },
    ]) {
      const text = resultText(await runTool(grepTool, workspace, args));
      expect(text).toBe('No matches.');
    }
  });

  test('stops when the signal is aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await runTool(grepTool, workspace, { pattern: 'needle' }, { signal: controller.signal });
    expect(resultText(result)).toBe('No matches.');
    expect(result.details).toMatchObject({ filesScanned: 0 });
  });
});

describe('glob', () => {
  beforeEach(async () => {
    await put('.hidden.ts', '');
    await put('z.ts', '');
  });

  test('matches are sorted, workspace-relative, and skip node_modules and .git', async () => {
    const result = await runTool(globTool, workspace, { pattern: '**/*.ts' });
    expect(resultText(result).split('\n')).toEqual(['.hidden.ts', 'src/a.ts', 'src/deep/c.ts', 'z.ts']);
    expect(result.details).toEqual({ matches: 4 });
  });

  test('a pattern without ** only matches at its level', async () => {
    const text = resultText(await runTool(globTool, workspace, { pattern: '*.ts' }));
    expect(text).toBe('.hidden.ts\nz.ts');
  });

  test('path sets the directory the pattern starts from', async () => {
    const text = resultText(await runTool(globTool, workspace, { pattern: '*.ts', path: 'src' }));
    expect(text).toBe('src/a.ts');
  });

  test('no match says so', async () => {
    const result = await runTool(globTool, workspace, { pattern: '**/*.rs' });
    expect(resultText(result)).toBe('No files matched.');
    expect(result.details).toEqual({ matches: 0 });
  });

  test('explicitly naming node_modules still finds nothing there', async () => {
    const text = resultText(await runTool(globTool, workspace, { pattern: 'node_modules/**/*.ts' }));
    expect(text).toBe('No files matched.');
  });
});

describe('assertContainedPattern', () => {
  test.each(['../*', '/etc/*', 'a/../../b', '..', 'x\0y'])('refuses %j', (pattern) => {
    expect(() => assertContainedPattern(pattern)).toThrow(ToolError);
  });

  test.each(['**/*.ts', 'src/*.js', '..foo/*', 'a..b', '.hidden/*'])('allows %j', (pattern) => {
    expect(() => assertContainedPattern(pattern)).not.toThrow();
  });
});
