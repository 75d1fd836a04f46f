/**
 * The shell command denylist: patterns refused before anything runs, in
 * every security mode. Matching is case-insensitive and done on the command as bash would mostly
 * read it (quotes and backslashes removed, `${IFS}` read as a space, runs of blanks as one), so
 * `SUDO`, `s"u"do`, `/usr/bin/sudo` and `rm  -r  -f  /` are all caught.
 *
 * A denylist is a tripwire against accidents and obvious misuse, not a sandbox: a command that
 * builds its words at run time (`$(printf 'su%s' do)`) is not recognised. `safe-bin` mode, approval
 * and the workspace are the real limits.
 */
export function deniedCommandPattern(command: string): string | undefined {
  const text = normalize(command);
  for (const rule of RULES) {
    if (rule.matches(text)) return rule.label;
  }
  return undefined;
}

function normalize(command: string): string {
  return command
    .toLowerCase()
    .replace(/\\\r?\n/g, '')
    .replace(/\$\{?ifs\}?/g, ' ')
    .replace(/['"\\]/g, '')
    .replace(/[ \t\v\f]+/g, ' ');
}

/** Not part of a longer word: `/usr/bin/sudo` and `(sudo` match, `pseudo` and `sudoku` do not. */
const START = String.raw`(?<![\w.-])`;
const END = String.raw`(?![\w-])`;
/** Where a command name can stand: the start, after an operator, or after a command that runs the next words. */
const COMMAND_POSITION = String.raw`(?:^|[;&|({!\x60\n]|\$\(|(?:^|\s)(?:exec|env|xargs|nohup|nice|command|builtin|then|do|else|time|timeout\s+\S+))\s*(?:\S*/)?`;
/** The arguments of a command, up to the end of its simple command. */
const ARGUMENTS = String.raw`([^;&|\n)]*)`;

interface Rule {
  label: string;
  matches(text: string): boolean;
}

const word = (label: string, names: string) => pattern(label, `${START}(?:${names})${END}`);
const commandWord = (label: string, names: string) =>
  pattern(label, `${COMMAND_POSITION}(?:${names})(?=\\s|$|[;&|)])`);

function pattern(label: string, source: string): Rule {
  const regex = new RegExp(source, 'm');
  return { label, matches: (text) => regex.test(text) };
}

/** `name` run with a recursive flag on `/`, a top-level system directory or the home directory. */
function recursiveOnRoot(label: string, names: string, recursive: RegExp): Rule {
  const regex = new RegExp(`${START}(?:${names})${END}${ARGUMENTS}`, 'g');
  return {
    label,
    matches(text) {
      for (const match of text.matchAll(regex)) {
        const args = match[1]!.trim().split(' ').filter(Boolean);
        if (args.includes('--no-preserve-root')) return true;
        if (args.some((arg) => recursive.test(arg)) && args.some(isRootLike)) return true;
      }
      return false;
    },
  };
}

const SYSTEM_DIRECTORIES = new Set([
  'bin',
  'boot',
  'dev',
  'etc',
  'home',
  'lib',
  'lib32',
  'lib64',
  'opt',
  'proc',
  'root',
  'sbin',
  'srv',
  'sys',
  'usr',
  'var',
]);

function isRootLike(arg: string): boolean {
  const path = arg
    .replace(/\/+/g, '/')
    .replace(/(\/\.)+$/, '/')
    .replace(/\/\*$/, '/')
    .replace(/(.)\/$/, '$1');
  if (['/', '/*', '/..', '~', '~/', '$home', '${home}', '$home/', '${home}/'].includes(path)) return true;
  const top = /^\/([^/]+)$/.exec(path);
  return top !== null && SYSTEM_DIRECTORIES.has(top[1]!);
}

function killEverything(): Rule {
  const regex = new RegExp(`${START}kill${END}${ARGUMENTS}`, 'g');
  return {
    label: 'kill -1 (every process)',
    matches(text) {
      for (const match of text.matchAll(regex)) {
        const args = match[1]!.trim().split(' ').filter(Boolean);
        // `kill -1 PID` sends signal 1; `-1` after a signal option or `--` is the process id "all".
        if (args.indexOf('-1', 1) !== -1 || (args[0] === '--' && args[1] === '-1')) return true;
      }
      return false;
    },
  };
}

const RULES: Rule[] = [
  recursiveOnRoot('rm -rf /', 'rm', /^(-[a-z]*r[a-z]*|--recursive)$/),
  recursiveOnRoot('recursive chmod/chown of /', 'chmod|chown|chgrp', /^(-[a-z]*r[a-z]*|--recursive)$/),
  word('sudo', 'sudo|doas|pkexec|run0'),
  commandWord('su', 'su'),
  word('mkfs', 'mkfs|mke2fs|mkswap|wipefs|fdisk|sfdisk|parted'),
  pattern('dd if=', `${START}dd${END}${ARGUMENTS.replace('(', '(?:')}${START}(?:if|of)=`),
  // A function whose body pipes itself into itself: `:(){ :|:& };:`, `bomb() { bomb | bomb & }`.
  pattern('fork bomb', String.raw`([^\s(){};|&]+)\s*\(\s*\)\s*\{\s*(?:[^}]*?[\s;|&])?\1\s*\|\s*&?\s*\1`),
  pattern(
    'fork bomb',
    String.raw`function\s+([^\s(){};|&]+)\s*(?:\(\s*\))?\s*\{\s*(?:[^}]*?[\s;|&])?\1\s*\|\s*&?\s*\1`,
  ),
  pattern('fork bomb', String.raw`\$0\s*[|&]\s*\$0|${START}fork\s*while\s*fork`),
  word('shutdown', 'shutdown|reboot|poweroff'),
  commandWord('halt', 'halt|telinit|init\\s+[0-6s]'),
  pattern('write to a disk device', String.raw`>\s*/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|mapper/)`),
  pattern('shred a device', `${START}shred${END}${ARGUMENTS.replace('(', '(?:')}/dev/`),
  killEverything(),
];
