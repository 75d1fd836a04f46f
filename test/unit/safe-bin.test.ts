import { execFileSync } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CommandPolicy } from '../../src/tools/exec/exec-policy';
import { Workspace } from '../../src/tools/workspace';
import { makeTempDir, removeDir, toolErrorOf } from './tool-harness';

/**
 * safe-bin as an allowlist a hostile model cannot talk around: every spelling that would reach a
 * refused option, a file outside the workspace, a FIFO or another program is refused, and ordinary
 * read-only commands still run.
 */
let parent: string;
let workspace: Workspace;
const policy = new CommandPolicy({ security: 'safe-bin' });
const check = (command: string) => policy.check(command, undefined, workspace);

beforeAll(async () => {
  parent = await makeTempDir('durable-agent-unit-safebin-');
  const root = path.join(parent, 'ws');
  await mkdir(path.join(root, 'src'), { recursive: true });
  await mkdir(path.join(parent, 'outside'));
  await writeFile(path.join(parent, 'outside', 'secret.txt'), 'top secret\n');
  await writeFile(path.join(root, 'a.txt'), 'b\na\nb\n');
  await writeFile(path.join(root, 'b.txt'), 'a\n');
  await writeFile(path.join(root, 'a.csv'), 'x,y\n1,2\n');
  await writeFile(path.join(root, 'src', 'app.ts'), 'const foo = 1;\n');
  await writeFile(path.join(root, 'list.txt'), `${path.join(parent, 'outside', 'secret.txt')}\n`);
  await symlink(path.join(parent, 'outside', 'secret.txt'), path.join(root, 'link-out'));
  await symlink(path.join(parent, 'outside'), path.join(root, 'dir-out'));
  execFileSync('mkfifo', [path.join(root, 'pipe')]);
  await symlink('pipe', path.join(root, 'link-to-pipe'));
  workspace = new Workspace(root);
});
afterAll(() => removeDir(parent));

const HOSTILE: Array<[string, string]> = [
  // Long options abbreviated, as GNU getopt would accept them.
  ['sort is out of the default list', 'sort --compress-program=sh a.txt'],
  ['du --dereference abbreviated', 'du --deref dir-out'],
  ['du --dereference shorter still', 'du --de dir-out'],
  ['ls --dereference abbreviated', 'ls --derefer dir-out'],
  ['wc --files0-from abbreviated', 'wc --files0=list.txt'],
  ['du --files0-from in full', 'du --files0-from=list.txt'],
  ['grep --dereference-recursive abbreviated', 'grep --dereference-rec foo .'],
  ['grep --file abbreviated to an outside file', 'grep --fil=../outside/secret.txt x a.txt'],
  ['tail --follow abbreviated', 'tail --foll a.txt'],
  ['date --set abbreviated', 'date --se=2000-01-01'],
  ['date --file', 'date --file=list.txt'],
  ['an unknown long option', 'cat --output=x a.txt'],
  ['a flag given a value', 'wc --lines=5 a.txt'],
  // Short options: refused letters, clustered or glued.
  ['grep -R follows links', 'grep -R foo .'],
  ['grep -R hidden in a cluster', 'grep -rRn foo .'],
  ['ls -L follows links', 'ls -L dir-out'],
  ['ls -L in a cluster', 'ls -laL'],
  ['stat -L', 'stat -L link-out'],
  ['du -L', 'du -sL .'],
  ['diff -r follows links', 'diff -r dir-out src'],
  ['md5sum -c reads listed files', 'md5sum -c list.txt'],
  ['sha256sum --check', 'sha256sum --check list.txt'],
  ['tail -f waits forever', 'tail -f a.txt'],
  ['tail -F', 'tail -F a.txt'],
  ['date -s', 'date -s 2000-01-01'],
  ['date -f reads dates from a file', 'date -f list.txt'],
  ['a glued absolute value', 'grep -f/etc/passwd x a.txt'],
  ['a glued traversal value', 'grep -f../outside/secret.txt x a.txt'],
  ['a glued link value', 'grep -flink-out x a.txt'],
  ['a separate link value', 'grep -f link-out x a.txt'],
  ['a glued value after flags', 'grep -inflink-out x a.txt'],
  ['date -r outside', 'date -r /etc/passwd'],
  ['date --reference through a link', 'date --reference=link-out'],
  // Operands.
  ['an absolute operand', 'cat /etc/passwd'],
  ['an absolute operand after --', 'head -n 1 -- /etc/passwd'],
  ['a traversal operand', 'cat ../outside/secret.txt'],
  ['a nested traversal', 'cat src/../../outside/secret.txt'],
  ['a symlink out', 'cat link-out'],
  ['a path through a symlinked directory', 'wc -l dir-out/secret.txt'],
  ['a symlinked directory', 'ls dir-out'],
  ['a FIFO', 'cat pipe'],
  ['a link to a FIFO', 'head link-to-pipe'],
  ['a FIFO as input', 'wc -l < pipe'],
  ['a device', 'od -c /dev/zero'],
  ['grep with -e: the first operand is a file', 'grep /etc/passwd -e root'],
  ['grep with -e after: the first operand is a file', 'grep ../outside/secret.txt -e top'],
  ['uniq writing its second operand', 'uniq a.txt out.txt'],
  ['cmp with a third operand', 'cmp a.txt b.txt ../outside/secret.txt'],
  ['pwd with an operand', 'pwd /'],
  ['head -NUM with letters', 'head -5x a.txt'],
  ['an empty path', "cat ''"],
  // Shell-level tricks.
  ['tilde', 'cat ~/.ssh/id_rsa'],
  ['a variable', 'cat $HOME/.bashrc'],
  ['command substitution', 'cat $(echo a.txt)'],
  ['backquotes', 'cat `echo a.txt`'],
  ['process substitution', 'cat <(id)'],
  ['a glob', 'cat *.txt'],
  ['brace expansion', 'cat {a,b}.txt'],
  ['an environment assignment', 'LC_ALL=C cat a.txt'],
  ['LD_PRELOAD', 'LD_PRELOAD=./x.so cat a.txt'],
  ['output to a file', 'cat a.txt > copy.txt'],
  ['appending to a file', 'echo hi >> a.txt'],
  ['output via >|', 'echo hi >| a.txt'],
  ['a here-string', 'cat <<< hi'],
  ['a here-document', 'cat <<EOF\nhi\nEOF'],
  ['a program by path', '/usr/bin/cat a.txt'],
  ['a relative program path', './cat a.txt'],
  ['a shell', 'bash -c id'],
  ['env runs programs', 'env id'],
  ['xargs runs programs', 'xargs id < a.txt'],
  ['find -exec', 'find . -exec id ;'],
  ['awk system()', 'awk \'BEGIN{system("id")}\''],
  ['sed e', "sed 'e id' a.txt"],
  ['a pager', 'less a.txt'],
  ['an editor', 'vi a.txt'],
  ['an allowed program piped into a shell', 'cat a.txt | sh'],
  ['an allowed program then a forbidden one', 'ls && id'],
  ['a subshell', '(cat a.txt)'],
];

test(`the table holds at least 60 hostile lines (${HOSTILE.length})`, () => {
  expect(HOSTILE.length).toBeGreaterThanOrEqual(60);
});

test.each(HOSTILE)('refuses %s: %j', async (_label, command) => {
  const error = await toolErrorOf(check(command));
  expect(error.kind).toBe('PermissionDenied');
  expect(error.message).toMatch(/^command refused in safe-bin mode: .+/);
});

test.each([
  'grep -rn foo src',
  "grep -rn --include='*.ts' foo src",
  'head -n 5 a.txt',
  'head -5 a.txt',
  'tail -n +2 a.csv',
  'wc -l a.txt',
  'ls -la',
  'ls -la src',
  'cat a.txt | tr a-z A-Z | uniq -c',
  'diff a.txt b.txt',
  'diff -u a.txt b.txt',
  'cut -d, -f2 a.csv',
  'cut --delimiter=, --fields=2 a.csv',
  'grep -e foo -e bar src/app.ts',
  'grep foo -- src/app.ts',
  'sha256sum a.txt b.txt',
  'du -sh src',
  'stat -c %s a.txt',
  'seq -3 3',
  'date -u +%Y',
  'echo /etc/passwd',
  'test -f a.txt && echo yes',
  'cat - < a.txt',
  'ls missing 2>/dev/null || echo none',
])('allows %j', async (command) => {
  await expect(check(command)).resolves.toBeUndefined();
});

test('errors say which options a program takes and how to spell one out', async () => {
  expect((await toolErrorOf(check('du --deref .'))).message).toContain(
    'du --deref is not an allowed option; du takes only -a',
  );
  expect((await toolErrorOf(check('wc --lin a.txt'))).message).toContain(
    'wc --lin: spell the option out in full (--lines)',
  );
});

test('a program the operator adds without a table entry takes no options, only checked operands', async () => {
  const custom = new CommandPolicy({ security: 'safe-bin', safeBins: ['cat', 'xxd'] });
  await expect(custom.check('xxd a.txt', undefined, workspace)).resolves.toBeUndefined();
  expect((await toolErrorOf(custom.check('xxd -r a.txt', undefined, workspace))).message).toContain(
    'xxd -r is not an allowed option; xxd takes no options',
  );
  expect((await toolErrorOf(custom.check('xxd ../outside/secret.txt', undefined, workspace))).kind).toBe(
    'PermissionDenied',
  );
});

test('sort added back by the operator gets only its safe options', async () => {
  const custom = new CommandPolicy({ security: 'safe-bin', safeBins: ['sort'] });
  await expect(custom.check('sort -rn -k2 a.txt', undefined, workspace)).resolves.toBeUndefined();
  for (const command of [
    'sort -o out a.txt',
    'sort -uo out a.txt',
    'sort --output=out a.txt',
    'sort --compress-program=sh a.txt',
    'sort --compress-prog=sh a.txt',
    'sort -T /tmp a.txt',
    'sort --files0-from=list.txt',
  ]) {
    expect((await toolErrorOf(custom.check(command, undefined, workspace))).kind).toBe('PermissionDenied');
  }
});
