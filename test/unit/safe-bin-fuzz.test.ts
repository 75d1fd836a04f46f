import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseCommandLine } from '../../src/tools/exec/shell-parse';

/**
 * safe-bin decides on the words our tokenizer reads, and bash runs the words it reads: wherever the
 * two differ, a checked command is not the command that runs. Generated lines built from hostile
 * fragments are given to both; whenever ours accepts a line, real bash (no startup files, an empty
 * environment, an empty directory) must read exactly the same words. Lines ours refuses are not run.
 */
const FRAGMENTS = [
  'a',
  'b.txt',
  '-n',
  '--x=y',
  'a=b',
  'é',
  '%',
  '@',
  '+',
  'a,b',
  ':',
  "'a b'",
  '"a b"',
  '"a\\"b"',
  'a\\ b',
  '"a\'b"',
  "'a\"b'",
  "\\'",
  '\\\\',
  '"\\\\"',
  "''",
  '""',
  "'$x'",
  '"$x"',
  '$x',
  '\\$x',
  '"\\$"',
  "$'x'",
  '${x}',
  '$((1))',
  '*',
  "'*'",
  '"*"',
  '\\*',
  'a?',
  '[a]',
  '~',
  'a~',
  '~root',
  '{a,b}',
  "'{a,b}'",
  'a{b',
  '$(id)',
  '`id`',
  '"$(id)"',
  "'`id`'",
  '<(id)',
  '!x',
  '"!x"',
  "'!x'",
  '#c',
  'a#b',
  '\\#',
  '\\\n',
  '"a\nb"',
  "'a\tb'",
  'a\\',
  '\\a',
  '"\\a"',
  '"\\n"',
];

/** A small deterministic generator (mulberry32), so a failure names a case that comes back. */
function random(seed: number): () => number {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function generate(count: number): string[] {
  const next = random(20261125);
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const words = 1 + Math.floor(next() * 4);
    const parts: string[] = [];
    for (let w = 0; w < words; w++) {
      // A word is one to three fragments glued together, so quoting styles meet inside one word.
      const glued = 1 + Math.floor(next() * 3);
      let word = '';
      for (let g = 0; g < glued; g++) word += FRAGMENTS[Math.floor(next() * FRAGMENTS.length)]!;
      parts.push(word);
    }
    lines.push(parts.join(' '));
  }
  return lines;
}

/** The words bash passes to a command, or undefined when bash refuses the line. */
function bashWords(line: string, cwd: string): string[] | undefined {
  const result = spawnSync('bash', ['--norc', '--noprofile', '-c', `printf '%s\\0' START ${line}`], {
    cwd,
    env: {},
    encoding: 'utf8',
    timeout: 5_000,
  });
  if (result.status !== 0) return undefined;
  // START keeps printf from printing its format once more when the line has no words.
  return result.stdout.split('\0').slice(1, -1);
}

test('whenever our tokenizer accepts a line, bash reads exactly the same words', () => {
  const cwd = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-fuzz-'));
  try {
    let accepted = 0;
    const lines = generate(3_000);
    for (const line of lines) {
      const parsed = parseCommandLine(`printf %s ${line}`);
      if (!parsed.ok) continue;
      // Only single commands without redirections are run through bash's printf.
      if (parsed.commands.length !== 1 || parsed.commands[0]!.redirections.length) continue;
      if (parsed.commands[0]!.assignments.length) continue;
      accepted++;
      const ours = parsed.commands[0]!.words.slice(2);
      expect({ line, words: bashWords(line, cwd) }).toEqual({ line, words: ours });
    }
    // The generator must reach both sides: many accepted lines, and many refused.
    expect(accepted).toBeGreaterThan(300);
    expect(accepted).toBeLessThan(lines.length - 300);
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
});

test('separators, redirections and comments split as bash splits them', () => {
  const cwd = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-fuzz-'));
  try {
    for (const line of [
      "printf '%s\\0' a; printf '%s\\0' b",
      "printf '%s\\0' a && printf '%s\\0' 'b c'",
      "printf '%s\\0' a # printf '%s\\0' hidden",
      "printf '%s\\0' 'a;b' \"c|d\" e\\&f",
      "printf '%s\\0' a 2>/dev/null | cat",
    ]) {
      const parsed = parseCommandLine(line);
      expect(parsed.ok).toBe(true);
      if (!parsed.ok) continue;
      const ours = parsed.commands
        .filter((command) => command.words[0] === 'printf')
        .flatMap((command) => command.words.slice(2));
      const result = spawnSync('bash', ['--norc', '--noprofile', '-c', line], {
        cwd,
        env: { PATH: process.env.PATH! },
        encoding: 'utf8',
      });
      expect(result.stdout.split('\0').slice(0, -1)).toEqual(ours);
    }
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
});
