import { parseCommandLine } from './shell-parse';
import { ToolError } from './tool-error';
import type { Workspace } from './workspace';

/**
 * Programs `safe-bin` mode runs by default: they read files and streams and print, nothing else.
 * None runs other programs, evaluates code or writes files (the options that would are refused
 * below). Never add shells, interpreters, or programs that run others (`env`, `xargs`, `find`,
 * `git`, `sed`, `awk`): any of them turns safe-bin into full.
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
  'sort',
  'stat',
  'tac',
  'tail',
  'test',
  'tr',
  'true',
  'uniq',
  'wc',
];

/** Options of default safe bins that write files, run programs or follow links out of the workspace. */
const DENIED_OPTIONS: Readonly<Record<string, readonly string[]>> = {
  sort: ['-o', '--output', '--compress-program', '--files0-from'],
  date: ['-s', '--set'],
  grep: ['-R', '--dereference-recursive'],
  du: ['-L', '--dereference', '--files0-from'],
  wc: ['--files0-from'],
};

/** Output may only be discarded or sent to another descriptor: files are written by the file tools. */
const WRITABLE_TARGETS = new Set(['/dev/null']);
const READABLE_ABSOLUTE = new Set(['/dev/null', '/dev/stdin']);

/**
 * Refuses (PermissionDenied) a command line unless every command in it is one of `bins`, run by
 * name, with no variable assignments, and every argument that could be a path stays inside the
 * workspace (symbolic links resolved). Anything the parser cannot read completely is refused.
 */
export async function assertSafeBinCommand(
  command: string,
  bins: ReadonlySet<string>,
  workspace: Workspace,
): Promise<void> {
  const refuse = (why: string): never => {
    throw new ToolError('PermissionDenied', `command refused in safe-bin mode: ${why}`);
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
    const denied = deniedOption(name, args);
    if (denied) return refuse(`${name} ${denied} is not allowed`);
    if (name === 'uniq' && args.filter((arg) => !arg.startsWith('-')).length > 1) {
      return refuse('uniq with an output file is not allowed');
    }
    for (const arg of args) {
      const problem = await pathProblem(arg, workspace);
      if (problem) return refuse(`${name} argument ${JSON.stringify(arg)}: ${problem}`);
    }
    for (const redirection of redirections) {
      const { operator, target } = redirection;
      if (operator === '>&' || operator === '<&') {
        if (!/^(\d+|-)$/.test(target)) return refuse(`${operator}${target} writes to a file`);
      } else if (operator === '<') {
        const problem = READABLE_ABSOLUTE.has(target) ? undefined : await pathProblem(target, workspace);
        if (problem) return refuse(`input ${JSON.stringify(target)}: ${problem}`);
      } else if (!WRITABLE_TARGETS.has(target)) {
        return refuse(`output may only be redirected to /dev/null or another descriptor, not ${target}`);
      }
    }
  }
}

function deniedOption(name: string, args: string[]): string | undefined {
  const denied = DENIED_OPTIONS[name];
  if (!denied) return undefined;
  for (const arg of args) {
    if (arg === '--') return undefined;
    for (const option of denied) {
      if (option.startsWith('--')) {
        if (arg === option || arg.startsWith(`${option}=`)) return option;
      } else if (/^-[A-Za-z0-9]+/.test(arg) && !arg.startsWith('--') && arg.includes(option[1]!)) {
        return option; // `-o`, `-uo`, `-ofile`
      }
    }
  }
  return undefined;
}

/**
 * Any word may be a path: the word itself, the value of `--option=value`, or the value glued to a
 * short option (`-f/etc/x`). Absolute paths and `..` are refused outright; the rest must resolve
 * inside the workspace, so a link in the workspace that points outside is refused too.
 */
async function pathProblem(arg: string, workspace: Workspace): Promise<string | undefined> {
  const candidates = [arg];
  const equals = arg.indexOf('=');
  if (equals !== -1) candidates.push(arg.slice(equals + 1));
  if (/^-[A-Za-z]./.test(arg)) candidates.push(arg.slice(2));
  for (const candidate of candidates) {
    if (/(^|[/=])\.\.(\/|$)/.test(candidate)) return 'parent directories (..) are outside the workspace';
    if (candidate.startsWith('/') && !READABLE_ABSOLUTE.has(candidate))
      return 'absolute paths are outside the workspace';
  }
  for (const candidate of candidates) {
    if (candidate.startsWith('-') || candidate === '' || READABLE_ABSOLUTE.has(candidate)) continue;
    try {
      await workspace.resolve(candidate);
    } catch (error) {
      if (error instanceof ToolError && error.kind === 'InvalidPath') return error.message;
      // What cannot be checked is refused; a parent that is a file is no escape (the program says so).
      if (!(error instanceof ToolError))
        return `it cannot be checked as a path (${(error as Error).message})`;
    }
  }
  return undefined;
}
