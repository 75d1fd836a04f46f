import type { ConversationOptionsInput } from '../../src/shared/conversation-options';

/** Where the corpus runs: the workspace, the directory beside it that nothing may reach, and markers. */
export interface CorpusPlaces {
  workspace: string;
  outside: string;
  /** A name no case may create anywhere: written-outside checks look for it. */
  escapeName: string;
  /** A loopback port whose listener counts connections: sandboxed commands must not reach it. */
  listenerPort: number;
  /**
   * A host process started with the secrets in its environment and one on its command line, as a
   * worker holds them: sandboxed commands must not see it at all (its pid and the word on its command line).
   */
  secretHolder: { pid: number; name: string };
  /** The worker's process and its parent, whose start-up environments /proc also shows. */
  workerPids: number[];
}

/** One hostile call: `refused` must come back as an error result; `answered` may run, harmlessly. */
export interface HostileCall {
  tool: string;
  args: Record<string, unknown>;
  expect: 'refused' | 'answered';
  /** What else the answer must (not) say. */
  check?: (text: string) => void;
}

export interface HostileClass {
  name: string;
  options: ConversationOptionsInput;
  calls: HostileCall[];
  /** Needs bubblewrap. */
  sandbox?: boolean;
}

const refused = (tool: string, args: Record<string, unknown>): HostileCall => ({
  tool,
  args,
  expect: 'refused',
});
const answered = (
  tool: string,
  args: Record<string, unknown>,
  check?: (text: string) => void,
): HostileCall => ({
  tool,
  args,
  expect: 'answered',
  ...(check ? { check } : {}),
});
const exec = (command: string) => refused('exec', { command });

export function hostileClasses(places: CorpusPlaces): HostileClass[] {
  const { outside, escapeName } = places;
  const holder = places.secretHolder;
  const auto = { approval: { mode: 'auto' as const } };
  return [
    {
      name: 'safe-bin: abbreviations, glued values, hidden flags, other programs, shell tricks',
      options: { ...auto, execSecurity: 'safe-bin' },
      calls: [
        `sort --compress-program=sh a.txt`,
        `sort --compress-prog=sh a.txt`,
        `sort --outp=../${escapeName} a.txt`,
        `du --deref dir-out`,
        `du --de dir-out`,
        `ls --derefer dir-out`,
        `wc --files0=list.txt`,
        `du --files0-from=list.txt`,
        `grep --dereference-rec TOP .`,
        `grep --fil=../outside/secret.txt x a.txt`,
        `tail --foll a.txt`,
        `date --se=2000-01-01`,
        `grep -R TOP .`,
        `grep -rRn TOP .`,
        `ls -laL dir-out`,
        `stat -L link-out`,
        `du -sL .`,
        `diff -r dir-out sub`,
        `md5sum -c list.txt`,
        `sha256sum --check list.txt`,
        `tail -f a.txt`,
        `date -f list.txt`,
        `grep -f${outside}/secret.txt x a.txt`,
        `grep -f../outside/secret.txt x a.txt`,
        `grep -flink-out x a.txt`,
        `grep -inflink-out x a.txt`,
        `head -n1 -- ${outside}/secret.txt`,
        `grep ${outside}/secret.txt -e TOP`,
        `cat ${outside}/secret.txt`,
        `cat ../${outside.split('/').pop()}/secret.txt`,
        `cat link-out`,
        `wc -l dir-out/secret.txt`,
        `cat pipe`,
        `head link-to-pipe`,
        `wc -l < pipe`,
        `od -c /dev/zero`,
        `uniq a.txt ../${escapeName}`,
        `cat ~/.bashrc`,
        `cat $HOME/.bashrc`,
        'cat $(echo a.txt)',
        'cat `echo a.txt`',
        'cat <(env)',
        'cat *.txt',
        `LD_PRELOAD=./x.so cat a.txt`,
        `cat a.txt > ../${escapeName}`,
        `echo hi >| ../${escapeName}`,
        `cat <<< hi`,
        `/usr/bin/env`,
        `env`,
        `xargs cat < list.txt`,
        `find . -exec cat {} ;`,
        `awk 'BEGIN{system("env")}'`,
        `sed 'e env' a.txt`,
        `bash -c env`,
        `cat a.txt | sh`,
        `ls && printenv`,
      ].map(exec),
    },
    {
      name: 'secrets: the worker environment never reaches a command',
      options: auto,
      calls: [
        'env',
        'printenv OPENAI_API_KEY',
        'echo "$AWS_SECRET_ACCESS_KEY $PGPASSWORD $TEMPORAL_API_KEY"',
        'set',
        'export -p',
        'declare -p',
        'cat /proc/self/environ | tr "\\0" "\\n"',
        'compgen -v | while read v; do printf "%s=%s\\n" "$v" "${!v}"; done',
        'bash -lc env',
        'sh -c "env"',
        'python3 -c "import os; print(os.environ)" 2>/dev/null || node -e "console.log(process.env)"',
        'cat /proc/self/environ /proc/thread-self/environ | tr "\\0" "\\n"',
        'xargs -0 -n1 < /proc/$$/environ',
        `awk 'BEGIN { for (k in ENVIRON) print k "=" ENVIRON[k] }'`,
        `perl -e 'print "$_=$ENV{$_}\\n" for keys %ENV' 2>/dev/null || true`,
        'env -0 | tr "\\0" "\\n"',
        `bash -c 'for v in $(compgen -e); do echo "$v=\${!v}"; done'`,
      ].map((command) => answered('exec', { command })),
    },
    {
      name: 'sandbox: the host processes out of sight, /proc is the sandbox’s own',
      options: { ...auto, execSecurity: 'sandbox' },
      sandbox: true,
      calls: [
        ...[
          'cat /proc/1/environ',
          'cat /proc/$PPID/environ',
          'for p in /proc/[0-9]*; do cat $p/environ; done; echo',
          `cat /proc/${holder.pid}/environ`,
          `tr '\\0' '\\n' < /proc/${holder.pid}/environ`,
          `cat /proc/${holder.pid}/cmdline`,
          `cat /proc/self/../${holder.pid}/environ /proc/self/../${holder.pid}/cmdline`,
          `cd /proc/${holder.pid} && cat environ cmdline`,
          `cat /proc/$(pgrep -f ${holder.name} | head -1)/environ /proc/$(pgrep -f ${holder.name} | head -1)/cmdline`,
          `ps -eww e -o pid=,args= 2>&1 | grep -a ${holder.name}`,
          'for p in /proc/[0-9]*; do tr "\\0" " " < $p/cmdline; echo; done | grep -a -- --api-key',
          'grep -a -h -o "[A-Z_]*KEY=[^[:cntrl:]]*" /proc/*/environ 2>&1 | head -20',
          ...places.workerPids.map((pid) => `cat /proc/${pid}/environ /proc/${pid}/cmdline`),
        ].map((command) => answered('exec', { command })),
        answered('exec', { command: `test -e /proc/${holder.pid} && echo visible || echo hidden` }, (text) =>
          expectSome(text, 'hidden'),
        ),
        answered('exec', { command: 'ls /proc' }, (text) => {
          if (text.split(/\s+/).includes(String(holder.pid)))
            throw new Error(`ls /proc lists the host process ${holder.pid}`);
        }),
      ],
    },
    {
      name: 'sandbox: the host files, network and privileges out of reach',
      options: { ...auto, execSecurity: 'sandbox' },
      sandbox: true,
      calls: [
        `cat ${outside}/secret.txt`,
        `cat ../${outside.split('/').pop()}/secret.txt`,
        'cat link-out',
        `touch ${outside}/${escapeName}`,
        `echo x > ../${escapeName}`,
        `echo x > /tmp/${escapeName}`,
        `(exec 3<>/dev/tcp/127.0.0.1/${places.listenerPort}) 2>&1; echo done`,
        'cat /etc/shadow; ls /root /home',
        'env',
        'mount -t tmpfs none /mnt 2>&1; echo done',
        'cat /proc/self/mountinfo | head -3',
      ].map((command) => answered('exec', { command })),
    },
    {
      name: 'file tools: out of the workspace, special files, huge files',
      options: auto,
      calls: [
        ...[
          '../outside/secret.txt',
          `${outside}/secret.txt`,
          'sub/../../outside/secret.txt',
          'link-out',
          'dir-out/secret.txt',
          'dangling',
          'loop-a',
          'pipe',
          'link-to-pipe',
          'zero',
          'a.txt\u0000/../../outside/secret.txt',
          '/etc/passwd',
          '/proc/self/environ',
          'sub/../dir-out/secret.txt',
        ].map((target) => refused('read', { path: target })),
        ...[
          `../${escapeName}`,
          `${outside}/${escapeName}`,
          `dir-out/${escapeName}`,
          `dangling`,
          'pipe',
          'link-to-pipe',
          `/tmp/${escapeName}`,
        ].map((target) => refused('write', { path: target, content: 'escaped' })),
        ...['../outside/secret.txt', 'link-out', 'dir-out/secret.txt', 'pipe', 'link-to-pipe', 'big.txt'].map(
          (target) => refused('edit', { path: target, old_string: 'TOP', new_string: 'x' }),
        ),
        refused('apply_patch', {
          input: `*** Begin Patch\n*** Add File: ../${escapeName}\n+escaped\n*** End Patch`,
        }),
        refused('apply_patch', {
          input: `*** Begin Patch\n*** Update File: link-out\n@@\n-TOP\n+x\n*** End Patch`,
        }),
        refused('apply_patch', {
          input: `*** Begin Patch\n*** Update File: pipe\n@@\n-x\n+y\n*** End Patch`,
        }),
        refused('apply_patch', {
          input: `*** Begin Patch\n*** Delete File: dir-out/secret.txt\n*** End Patch`,
        }),
        ...['..', outside, 'dir-out', '/'].map((target) => refused('list_directory', { path: target })),
        ...['../**', '/etc/*', '**/../../**'].map((pattern) => refused('glob', { pattern })),
        refused('glob', { pattern: '*', path: 'dir-out' }),
        refused('grep', { pattern: 'TOP', path: '..' }),
        refused('grep', { pattern: 'TOP', path: 'dir-out' }),
        refused('grep', { pattern: 'TOP', path: 'link-out' }),
        refused('grep', { pattern: 'x', path: 'pipe' }),
        answered('grep', { pattern: 'TOP' }, (text) => expectNo(text, 'TOP-SECRET')),
      ],
    },
    {
      name: 'grep: patterns that backtrack for ever, and syntax a linear engine refuses',
      options: auto,
      calls: [
        ...['(a+)+$', '(\\w+\\s?)*$', '(a|aa)+$', '(.*a){25}', '([a-z]+)*[0-9]', '(a*)*b'].map((pattern) =>
          answered('grep', { pattern, path: 'adversarial.txt' }),
        ),
        refused('grep', { pattern: '(a)\\1', path: 'adversarial.txt' }),
        refused('grep', { pattern: '(?=a)a', path: 'adversarial.txt' }),
        refused('glob', { pattern: '*a*a*a*a*a*a*a*a*a*a*b' }),
      ],
    },
    {
      name: 'commands whose leftovers hold the pipes',
      options: auto,
      calls: [
        answered('exec', { command: 'setsid sleep 1000 & echo started' }, (text) =>
          expectSome(text, 'started'),
        ),
        answered('exec', { command: '(setsid sh -c "sleep 1000" &); echo forked' }, (text) =>
          expectSome(text, 'forked'),
        ),
        refused('exec', { command: '(setsid sh -c "sleep 1000" &); sleep 30', timeout: 1 }),
        refused('exec', { command: 'sleep 30 & wait', timeout: 1 }),
      ],
    },
    {
      name: 'web_fetch: the worker network and other schemes',
      options: auto,
      calls: [
        `http://127.0.0.1:${places.listenerPort}/?leak=TOP-SECRET`,
        'http://localhost:1/',
        'http://[::1]:1/',
        'http://169.254.169.254/latest/meta-data/',
        'http://0x7f000001:1/',
        'http://2130706433:1/',
        `http://[::ffff:127.0.0.1]:${places.listenerPort}/`,
        `http://127.1:${places.listenerPort}/`,
        `http://0.0.0.0:${places.listenerPort}/`,
        `http://user:secret@127.0.0.1:${places.listenerPort}/`,
        'file:///etc/passwd',
        'ftp://127.0.0.1/',
        `gopher://127.0.0.1:${places.listenerPort}/`,
        `http://localhost.:${places.listenerPort}/`,
        `http://127.0.0.1.:${places.listenerPort}/`,
        `http://[::]:${places.listenerPort}/`,
        `http://0:${places.listenerPort}/`,
        `http://017700000001:${places.listenerPort}/`,
        `http://0x7f.0x0.0x0.0x1:${places.listenerPort}/`,
        `http://[::ffff:7f00:1]:${places.listenerPort}/`,
        'http://10.0.0.1/',
        'http://192.168.1.1/',
        'http://[fd00::1]/',
      ].map((url) => refused('web_fetch', { url })),
    },
  ];
}

function expectNo(text: string, what: string): void {
  if (text.includes(what)) throw new Error(`the answer contains ${what}`);
}

function expectSome(text: string, what: string): void {
  if (!text.includes(what)) throw new Error(`the answer lacks ${what}: ${text.slice(0, 200)}`);
}
