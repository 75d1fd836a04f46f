import { stat } from 'node:fs/promises';
import { type ProgramOptions, SAFE_BIN_PROGRAMS, UNKNOWN_PROGRAM } from './safe-bin-programs';
import { parseCommandLine } from './shell-parse';
import { ToolError } from '../tool-error';
import type { Workspace } from '../workspace';

/**
 * Programs `safe-bin` mode runs by default: they read files and streams and print, nothing else,
 * with only the options their entry in SAFE_BIN_PROGRAMS lists. Never add shells, interpreters, or
 * programs that run others whatever their options (`env`, `xargs`, `find -exec`, `git`, `sed e`,
 * `awk system()`, pagers, editors): any of them turns safe-bin into full.
 */
export const DEFAULT_SAFE_BINS: readonly string[] = [
  'base64',
  'basename',
  'cat',
  'cmp',
  'comm',
  'cut',
  'date',
  'diff',
  'dirname',
  'du',
  'echo',
  'expr',
  'false',
  'fold',
  'grep',
  'head',
  'join',
  'ls',
  'md5sum',
  'nl',
  'od',
  'paste',
  'printf',
  'pwd',
  'realpath',
  'rev',
  'seq',
  'sha1sum',
  'sha256sum',
  'stat',
  'tac',
  'tail',
  'test',
  'tr',
  'true',
  'uniq',
  'wc',
];

/** Output may only be discarded or sent to another descriptor: files are written by the file tools. */
const WRITABLE_TARGETS = new Set(['/dev/null']);
const READABLE_ABSOLUTE = new Set(['/dev/null', '/dev/stdin']);

class Refused extends Error {}

/**
 * Refuses (PermissionDenied) a command line unless every command in it is one of `bins`, run by
 * name, with no variable assignments, only the options its entry in SAFE_BIN_PROGRAMS lists (long
 * ones spelled in full), and every path it would open (operands, option values, input
 * redirections) a regular file or directory inside the workspace, symbolic links resolved.
 * Anything the parser cannot read completely is refused.
 */
export async function assertSafeBinCommand(
  command: string,
  bins: ReadonlySet<string>,
  workspace: Workspace,
): Promise<void> {
  try {
    await checkCommandLine(command, bins, workspace);
  } catch (error) {
    if (error instanceof Refused)
      throw new ToolError('PermissionDenied', `command refused in safe-bin mode: ${error.message}`);
    throw error;
  }
}

async function checkCommandLine(command: string, bins: ReadonlySet<string>, workspace: Workspace) {
  const refuse = (why: string): never => {
    throw new Refused(why);
  };
  const parsed = parseCommandLine(command);
  if (!parsed.ok) return refuse(parsed.reason);
  if (parsed.commands.length === 0) return refuse('there is no command');
  for (const { assignments, words, redirections } of parsed.commands) {
    if (assignments.length) return refuse(`variable assignments (${assignments[0]}) are not allowed`);
    const [name, ...args] = words;
    if (name === undefined) return refuse('a redirection without a command');
    if (name.includes('/')) return refuse(`run programs by name, not by path (${name})`);
    if (!bins.has(name)) {
      return refuse(`${name} is not an allowed program; allowed: ${[...bins].sort().join(', ')}`);
    }
    const program = Object.hasOwn(SAFE_BIN_PROGRAMS, name) ? SAFE_BIN_PROGRAMS[name]! : UNKNOWN_PROGRAM;
    for (const { word, kind } of readArguments(name, program, args)) {
      if (kind === 'path') {
        const problem = await pathProblem(word, workspace);
        if (problem) return refuse(`${name} argument ${JSON.stringify(word)}: ${problem}`);
      }
    }
    for (const redirection of redirections) {
      const { operator, target } = redirection;
      if (operator === '>&' || operator === '<&') {
        if (!/^(\d+|-)$/.test(target)) return refuse(`${operator}${target} writes to a file`);
      } else if (operator === '<') {
        const problem = await pathProblem(target, workspace);
        if (problem) return refuse(`input ${JSON.stringify(target)}: ${problem}`);
      } else if (!WRITABLE_TARGETS.has(target)) {
        return refuse(`output may only be redirected to /dev/null or another descriptor, not ${target}`);
      }
    }
  }
}

/**
 * The words of one invocation as the program will read them: each option checked against the
 * program's table (throws Refused for anything not listed), each operand and option value marked
 * as a path to check or text never opened.
 */
export function readArguments(
  name: string,
  program: ProgramOptions,
  args: readonly string[],
): Array<{ word: string; kind: 'path' | 'text' }> {
  const words: Array<{ word: string; kind: 'path' | 'text' }> = [];
  const operands: string[] = [];
  let patternGiven = false;
  let optionsEnded = program.noOptions === true;
  const operand = (word: string) => {
    operands.push(word);
    if (program.maxOperands !== undefined && operands.length > program.maxOperands) {
      throw new Refused(
        program.maxOperands === 0
          ? `${name} takes no operands`
          : `${name} takes at most ${program.maxOperands} operand${program.maxOperands === 1 ? '' : 's'} here (a further one would be written to)`,
      );
    }
  };
  const value = (word: string | undefined, kind: 'value' | 'path', option: string) => {
    if (word === undefined) throw new Refused(`${name} ${option} needs a value`);
    words.push({ word, kind: kind === 'path' ? 'path' : 'text' });
    if (option === '-e' || option === '--regexp' || option === '-f' || option === '--file')
      patternGiven = true;
  };
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]!;
    if (optionsEnded || arg === '-' || !arg.startsWith('-')) {
      operand(arg);
      continue;
    }
    if (arg === '--') {
      optionsEnded = true;
      continue;
    }
    if (program.numericDashOperands && /^-\d/.test(arg)) {
      // `seq -3 3` counts from -3; `head -5` is the old spelling of `head -n 5`.
      if (program.operands === 'text') operand(arg);
      else if (!/^-\d+$/.test(arg)) throw new Refused(unknownShort(name, program, arg.slice(1)));
      continue;
    }
    if (arg.startsWith('--')) {
      const equals = arg.indexOf('=');
      const option = equals === -1 ? arg.slice(2) : arg.slice(2, equals);
      const kind = program.long?.[option];
      if (kind === undefined || !Object.hasOwn(program.long!, option))
        throw new Refused(unknownLong(name, program, option));
      if (kind === 'flag') {
        if (equals !== -1) throw new Refused(`${name} --${option} takes no value`);
        continue;
      }
      value(equals === -1 ? args[++index] : arg.slice(equals + 1), kind, `--${option}`);
      continue;
    }
    for (let at = 1; at < arg.length; at++) {
      const letter = arg[at]!;
      if (program.flags?.includes(letter)) continue;
      const kind =
        program.valued && Object.hasOwn(program.valued, letter) ? program.valued[letter] : undefined;
      if (kind === undefined) throw new Refused(unknownShort(name, program, letter));
      value(at + 1 < arg.length ? arg.slice(at + 1) : args[++index], kind, `-${letter}`);
      break;
    }
  }
  // GNU programs take options anywhere, so whether grep's first operand is its pattern is known
  // only once every option is read (`grep /etc/passwd -e root` reads /etc/passwd).
  operands.forEach((word, index) => {
    const text =
      program.operands === 'text' ||
      (program.operands === 'pattern-then-paths' && !patternGiven && index === 0) ||
      // For programs without options (test), words like -f are operators, not files.
      (program.noOptions === true && word.startsWith('-')) ||
      word === '-';
    words.push({ word, kind: text ? 'text' : 'path' });
  });
  return words;
}

function unknownLong(name: string, program: ProgramOptions, option: string): string {
  const longs = Object.keys(program.long ?? {});
  const meant = longs.filter((full) => full.startsWith(option));
  if (meant.length === 1 && option !== '')
    return `${name} --${option}: spell the option out in full (--${meant[0]})`;
  return `${name} --${option} is not an allowed option; ${name} takes ${allowedOptions(program)}`;
}

function unknownShort(name: string, program: ProgramOptions, letter: string): string {
  return `${name} -${letter} is not an allowed option; ${name} takes ${allowedOptions(program)}`;
}

function allowedOptions(program: ProgramOptions): string {
  const shorts = [...(program.flags ?? ''), ...Object.keys(program.valued ?? {})].map(
    (letter) => `-${letter}`,
  );
  const longs = Object.entries(program.long ?? {}).map(([name, kind]) =>
    kind === 'flag' ? `--${name}` : `--${name}=…`,
  );
  const all = [...shorts, ...longs];
  return all.length ? `only ${all.join(' ')}` : 'no options';
}

/**
 * A word the program will open as a file: absolute paths (but /dev/null) and `..` are refused
 * outright; the rest must resolve inside the workspace (so a link in it pointing outside is refused
 * too) and, when it exists, be a regular file or a directory: a FIFO or device could block the
 * command or read without end.
 */
async function pathProblem(word: string, workspace: Workspace): Promise<string | undefined> {
  if (READABLE_ABSOLUTE.has(word)) return undefined;
  if (word === '') return 'an empty path';
  if (/(^|\/)\.\.(\/|$)/.test(word)) return 'parent directories (..) are outside the workspace';
  if (word.startsWith('/')) return 'absolute paths are outside the workspace';
  let resolved: string;
  try {
    resolved = await workspace.resolve(word);
  } catch (error) {
    if (error instanceof ToolError && error.kind === 'InvalidPath') return error.message;
    // A parent that is a file is no escape (the program says so); anything else cannot be checked.
    if (error instanceof ToolError) return undefined;
    return `it cannot be checked as a path (${(error as Error).message})`;
  }
  const info = await stat(resolved).catch(() => undefined);
  if (info && !info.isFile() && !info.isDirectory()) return 'only regular files and directories may be read';
  return undefined;
}
