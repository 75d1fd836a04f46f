import { mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { effectiveExecSecurity } from '../../src/shared/exec-security';
import { BackgroundProcesses } from '../../src/tools/exec/background-processes';
import { deniedCommandPattern } from '../../src/tools/exec/command-denylist';
import { childEnvironment } from '../../src/tools/exec/child-environment';
import { createExecTool } from '../../src/tools/exec/exec';
import { CommandPolicy } from '../../src/tools/exec/exec-policy';
import { DEFAULT_SAFE_BINS } from '../../src/tools/exec/safe-bin';
import { parseCommandLine } from '../../src/tools/exec/shell-parse';
import type { ToolResult } from '../../src/tools/tool';
import { Workspace } from '../../src/tools/workspace';
import { execPolicyFromEnv } from '../../src/worker/exec-settings';
import { makeTempDir, removeDir, resultText, toolErrorOf } from './tool-harness';

jest.setTimeout(15_000);

let root: string;
let outside: string;
let workspace: Workspace;

beforeEach(async () => {
  root = await makeTempDir('durable-agent-unit-execsec-');
  outside = await makeTempDir('durable-agent-unit-outside-');
  await writeFile(path.join(outside, 'secret.txt'), 'top secret\n');
  await writeFile(path.join(root, 'notes.txt'), 'b\na\nb\n');
  await symlink(path.join(outside, 'secret.txt'), path.join(root, 'link-out'));
  await symlink(outside, path.join(root, 'dir-out'));
  workspace = new Workspace(root);
});

afterEach(async () => {
  await removeDir(root);
  await removeDir(outside);
});

describe('the denylist', () => {
  test.each([
    ['sudo', 'sudo ls'],
    ['upper case', 'SUDO ls'],
    ['mixed case', 'SuDo ls'],
    ['full path', '/usr/bin/sudo ls'],
    ['quoted pieces', 's"u"do ls'],
    ['single-quoted pieces', "su''do ls"],
    ['backslash inside', 's\\udo ls'],
    ['IFS instead of a space', 'sudo${IFS}ls'],
    ['inside a pipeline', 'cat x | xargs sudo rm'],
    ['inside command substitution', 'echo $(sudo id)'],
    ['inside backquotes', 'echo `sudo id`'],
    ['after &&', 'true && sudo -s'],
    ['doas', 'doas ls'],
    ['su at the start', 'su -'],
    ['su after ;', 'ls; su root'],
    ['su by path', 'exec /bin/su'],
    ['rm -rf /', 'rm -rf /'],
    ['rm with doubled spaces', 'rm  -rf  /'],
    ['rm with tabs', 'rm\t-rf\t/'],
    ['rm flags apart', 'rm -r -f /'],
    ['rm -fr', 'rm -fr /'],
    ['RM -RF', 'RM -RF /'],
    ['rm of /*', 'rm -rf /*'],
    ['rm of //', 'rm -rf //'],
    ['rm of /.', 'rm -rf /.'],
    ['rm quoted root', 'rm -rf "/"'],
    ['rm by path', '/bin/rm -rf /'],
    ['rm escaped', '\\rm -rf /'],
    ['rm long flags', 'rm --recursive --force /'],
    ['rm --no-preserve-root', 'rm -rf --no-preserve-root /'],
    ['rm of a system directory', 'rm -rf /usr'],
    ['rm of /etc/', 'rm -rf /etc/'],
    ['rm of home', 'rm -rf ~'],
    ['rm of home contents', 'rm -rf ~/*'],
    ['rm of $HOME', 'rm -rf $HOME'],
    ['rm after a line continuation', 'rm -rf \\\n/'],
    ['mkfs', 'mkfs /dev/sda1'],
    ['mkfs.ext4', 'mkfs.ext4 /dev/sda1'],
    ['MKFS', 'MKFS.EXT4 /dev/sda1'],
    ['dd if=', 'dd if=/dev/zero of=/dev/sda'],
    ['DD IF=', 'DD IF=/dev/random OF=out'],
    ['dd with spaces', 'dd  bs=1M  if=/dev/zero'],
    ['fork bomb', ':(){ :|:& };:'],
    ['fork bomb without spaces', ':(){:|:&};:'],
    ['named fork bomb', 'bomb(){ bomb|bomb& };bomb'],
    ['fork bomb with spaces', 'f () { f | f & } ; f'],
    ['function keyword fork bomb', 'function f { f | f & }; f'],
    ['perl fork bomb', 'perl -e "fork while fork"'],
    ['shutdown', 'shutdown -h now'],
    ['SHUTDOWN', 'SHUTDOWN now'],
    ['reboot', 'reboot'],
    ['systemctl reboot', 'systemctl reboot'],
    ['poweroff', '/sbin/poweroff'],
    ['halt', 'halt'],
    ['init 0', 'init 0'],
    ['write to a disk', 'echo x > /dev/sda'],
    ['kill every process', 'kill -9 -1'],
    ['chmod -R of /', 'chmod -R 777 /'],
  ])('refuses %s: %j', (_label, command) => {
    expect(deniedCommandPattern(command)).toBeDefined();
  });

  test.each([
    'ls -la',
    'echo pseudocode',
    'cat sudoku.txt',
    'rm -rf ./build',
    'rm -rf build/',
    'rm -rf /tmp/durable-agent-scratch',
    'git init',
    'echo su',
    'kill -1 1234',
    'kill 1234',
    'grep -r shutdown_hook src', // a word containing shutdown, not shutdown
    'npm run build && npm test',
    'diff a b',
  ])('lets through %j', (command) => {
    expect(deniedCommandPattern(command)).toBeUndefined();
  });
});

describe('the command line parser', () => {
  test('splits pipelines and lists into simple commands, quotes removed', () => {
    const parsed = parseCommandLine(`cat 'a b.txt' | grep -n "x y" && wc -l < notes.txt 2>&1; echo \\$HOME`);
    expect(parsed).toEqual({
      ok: true,
      commands: [
        { assignments: [], words: ['cat', 'a b.txt'], redirections: [] },
        { assignments: [], words: ['grep', '-n', 'x y'], redirections: [] },
        {
          assignments: [],
          words: ['wc', '-l'],
          redirections: [
            { operator: '<', target: 'notes.txt' },
            { fd: 2, operator: '>&', target: '1' },
          ],
        },
        { assignments: [], words: ['echo', '$HOME'], redirections: [] },
      ],
    });
  });

  test.each([
    ['variable', 'ls $HOME'],
    ['command substitution', 'echo $(id)'],
    ['substitution in double quotes', 'echo "$(id)"'],
    ['backquotes', 'echo `id`'],
    ['glob', 'cat *.txt'],
    ['brace expansion', 'echo {a,b}'],
    ['tilde', 'cat ~/x'],
    ['subshell', '(ls)'],
    ['here-document', 'cat <<EOF'],
    ['process substitution', 'diff <(ls) x'],
    ['compound command', 'if true; then ls; fi'],
    ['loop', 'for x in a; do ls; done'],
    ['unclosed quote', "echo 'oops"],
    ['dangling pipe', 'ls |'],
    ['leading pipe', '| ls'],
    ['NUL byte', 'ls\0'],
    ['escape character', 'echo \x1b[31m'],
    ['history expansion', 'echo !!'],
  ])('refuses what it cannot read safely: %s', (_label, command) => {
    expect(parseCommandLine(command).ok).toBe(false);
  });
});

describe('safe-bin mode', () => {
  const policy = new CommandPolicy({ security: 'safe-bin' });
  const check = (command: string) => policy.check(command, undefined, workspace);

  test.each([
    ['a program outside the list', 'curl http://example.com'],
    ['sort, out of the default list', 'sort notes.txt'],
    ['an interpreter', 'python3 -c "print(1)"'],
    ['a shell', 'bash -c ls'],
    ['a program by path', '/bin/ls'],
    ['a relative program path', './ls'],
    ['an allowed program piped into a forbidden one', 'cat notes.txt | sh'],
    ['a forbidden program after &&', 'ls && node -e 1'],
    ['a variable assignment', 'PATH=. ls'],
    ['LD_PRELOAD', 'LD_PRELOAD=x.so ls'],
    ['an absolute path argument', 'cat /etc/passwd'],
    ['a traversal argument', 'cat ../secret.txt'],
    ['a nested traversal', 'cat sub/../../secret.txt'],
    ['a traversal in an option value', 'grep --file=../patterns x'],
    ['an absolute path glued to an option', 'grep -f/etc/passwd x'],
    ['a symlink to a file outside', 'cat link-out'],
    ['a path through a symlinked directory', 'cat dir-out/secret.txt'],
    ['output to a file', 'echo hi > out.txt'],
    ['appending to a file', 'echo hi >> notes.txt'],
    ['both streams to a file', 'ls &> out.txt'],
    ['input from outside', 'wc -l < /etc/passwd'],
    ['sort writing a file', 'sort -o out.txt notes.txt'],
    ['sort writing a file, clustered', 'sort -uo out.txt notes.txt'],
    ['sort writing a file, long option', 'sort --output=out.txt notes.txt'],
    ['sort running a compressor', 'sort --compress-program=sh notes.txt'],
    ['uniq writing a file', 'uniq notes.txt out.txt'],
    ['an expansion', 'cat $(echo notes.txt)'],
    ['a glob', 'cat *.txt'],
    ['an empty command', ''],
    ['a denied command', 'sudo cat notes.txt'],
  ])('refuses %s: %j', async (_label, command) => {
    const error = await toolErrorOf(check(command));
    expect(error.kind).toBe('PermissionDenied');
  });

  test.each([
    'ls',
    'ls -la',
    'cat notes.txt',
    'cat notes.txt | uniq -c',
    'grep -n a notes.txt',
    "grep -e 'a|b' notes.txt",
    'wc -l < notes.txt',
    'ls missing-file 2>/dev/null || echo none',
    'head -n 2 notes.txt; tail -n 1 notes.txt',
    'echo done > /dev/null 2>&1',
    'diff notes.txt notes.txt && echo same',
  ])('allows %j', async (command) => {
    await expect(check(command)).resolves.toBeUndefined();
  });

  test('the allowed programs are configurable', async () => {
    const custom = new CommandPolicy({ security: 'safe-bin', safeBins: ['echo'] });
    await expect(custom.check('echo hi', undefined, workspace)).resolves.toBeUndefined();
    const error = await toolErrorOf(custom.check('ls', undefined, workspace));
    expect(error.message).toContain('ls is not an allowed program; allowed: echo');
  });

  test('the default list holds no shell, interpreter or program that runs others', () => {
    for (const name of [
      'sh',
      'bash',
      'zsh',
      'python3',
      'node',
      'perl',
      'env',
      'xargs',
      'find',
      'sed',
      'awk',
      'git',
    ])
      expect(DEFAULT_SAFE_BINS).not.toContain(name);
  });
});

describe('modes: the worker sets the ceiling, a conversation may only tighten it', () => {
  test.each([
    ['full', undefined, 'full'],
    ['full', 'full', 'full'],
    ['full', 'safe-bin', 'safe-bin'],
    ['safe-bin', undefined, 'safe-bin'],
    ['safe-bin', 'full', 'safe-bin'],
    ['full', 'sandbox', 'sandbox'],
    ['sandbox', undefined, 'sandbox'],
    ['sandbox', 'full', 'sandbox'],
    ['sandbox', 'safe-bin', 'safe-bin'],
    ['safe-bin', 'sandbox', 'safe-bin'],
  ] as const)('worker %s, conversation %s: %s', (worker, conversation, effective) => {
    expect(effectiveExecSecurity(worker, conversation)).toBe(effective);
  });

  test('environment: AGENT_EXEC_SECURITY and AGENT_EXEC_SAFE_BINS', () => {
    expect(execPolicyFromEnv({})).toMatchObject({ security: 'full' });
    expect(execPolicyFromEnv({})).not.toHaveProperty('safeBins');
    expect(
      execPolicyFromEnv({ AGENT_EXEC_SECURITY: 'safe-bin', AGENT_EXEC_SAFE_BINS: 'ls, cat ,' }),
    ).toMatchObject({
      security: 'safe-bin',
      safeBins: ['ls', 'cat'],
    });
    expect(execPolicyFromEnv({ AGENT_EXEC_SECURITY: 'sandbox' }).security).toBe('sandbox');
    expect(() => execPolicyFromEnv({ AGENT_EXEC_SECURITY: 'none' })).toThrow(/full, sandbox or safe-bin/);
    expect(() => execPolicyFromEnv({ AGENT_EXEC_SAFE_BINS: '/bin/sh' })).toThrow(/not paths/);
  });
});

describe('exec applies the policy before anything runs', () => {
  const processes = new BackgroundProcesses();
  afterAll(() => processes.killAll());
  const run = (
    security: 'full' | 'safe-bin',
    params: { command: string; background?: boolean },
    conversationMode?: 'full' | 'safe-bin',
  ): Promise<ToolResult> => {
    const tool = createExecTool({
      policy: new CommandPolicy({ security }),
      processes,
      env: childEnvironment(process.env),
    });
    return tool.execute('call_unit', tool.parameters.parse(params), new AbortController().signal, () => {}, {
      workspace,
      conversationId: 'c',
      agentId: 'default',
      ...(conversationMode ? { execSecurity: conversationMode } : {}),
    });
  };

  test.each([
    ['the foreground', false],
    ['the background', true],
  ])('a denied command is refused in %s and never started', async (_label, background) => {
    const error = await toolErrorOf(run('full', { command: 'touch ran; sudo true', background }));
    expect(error.kind).toBe('PermissionDenied');
    expect(error.message).toContain('denylist (sudo)');
    expect(await readdir(root)).not.toContain('ran');
  });

  test('a conversation in safe-bin mode on a full worker is held to safe-bin', async () => {
    const error = await toolErrorOf(run('full', { command: 'touch ran' }, 'safe-bin'));
    expect(error.kind).toBe('PermissionDenied');
    expect(error.message).toContain('touch is not an allowed program');
    expect(await readdir(root)).not.toContain('ran');
    expect(resultText(await run('full', { command: 'cat notes.txt' }, 'safe-bin'))).toBe(
      'exit code 0\nb\na\nb\n',
    );
  });

  test('a conversation asking for full on a safe-bin worker stays in safe-bin', async () => {
    const error = await toolErrorOf(run('safe-bin', { command: 'touch ran' }, 'full'));
    expect(error.kind).toBe('PermissionDenied');
    expect(await readdir(root)).not.toContain('ran');
  });

  test('the description tells the model the rules of a safe-bin worker', () => {
    const tool = createExecTool({
      policy: new CommandPolicy({ security: 'safe-bin' }),
      processes,
      env: childEnvironment(process.env),
    });
    expect(tool.description).toContain('safe-bin mode');
    expect(tool.description).toContain('cat');
  });

  test('safe-bin runs an allowed command in the workspace', async () => {
    await mkdir(path.join(root, 'sub'));
    await writeFile(path.join(root, 'sub', 'x.txt'), 'x');
    expect(resultText(await run('safe-bin', { command: 'ls sub' }))).toBe('exit code 0\nx.txt\n');
  });
});
