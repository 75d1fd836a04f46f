import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseA2AArgs } from '../../src/cli/commands/a2a';
import { parseAbortArgs } from '../../src/cli/commands/abort';
import { parseApproveArgs } from '../../src/cli/commands/approve';
import { parseEndArgs } from '../../src/cli/commands/end';
import { usageOf } from '../../src/cli/usage-text';
import { parseListArgs } from '../../src/cli/commands/list';
import { parseRunArgs } from '../../src/cli/commands/run';
import { parseSendArgs } from '../../src/cli/commands/send';
import { parseStatusArgs } from '../../src/cli/commands/status';
import { parseSteerArgs } from '../../src/cli/commands/steer';
import { UsageError } from '../../src/cli/usage-error';
import { takeConnectionFlags } from '../../src/cli/connection-flags';
import { parseClusterArgs } from '../../src/cli/commands/cluster';
import { parseWatchArgs } from '../../src/cli/commands/watch';

const me = () => 'alice';

function usageError(parse: () => unknown): string {
  try {
    parse();
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error('expected a usage error');
}

describe('run', () => {
  test('--approval sets the conversation approval mode; the workspace defaults to the current directory', () => {
    const run = parseRunArgs(['--id', 'c-1', '--approval', 'auto', 'write', 'it'], '/home/u/project');
    expect(run).toMatchObject({
      conversationId: 'c-1',
      prompt: 'write it',
      workspace: '/home/u/project',
      startWorker: true,
      json: false,
      options: { approval: { mode: 'auto' }, workspace: '/home/u/project' },
    });
  });

  test('every conversation flag reaches the options', () => {
    const run = parseRunArgs(
      [
        '--no-worker',
        '--json',
        '--workspace',
        'ws',
        '--model',
        'm',
        '--system',
        'be brief',
        '--max-tool-iterations',
        '3',
        '--approval',
        'ask',
        'go',
      ],
      '/tmp',
    );
    expect(run).toMatchObject({ startWorker: false, json: true, workspace: path.resolve('/tmp', 'ws') });
    expect(run.options).toEqual({
      workspace: path.resolve('/tmp', 'ws'),
      model: 'm',
      systemPrompt: 'be brief',
      maxToolIterations: 3,
      approval: { mode: 'ask' },
    });
  });

  test('--system-prompt and --append-system-prompt read their files; a missing file or both prompts is a usage error', () => {
    const directory = mkdtempSync(path.join(os.tmpdir(), 'prompt-flags-'));
    try {
      writeFileSync(path.join(directory, 'system.md'), 'You review code.\n');
      writeFileSync(path.join(directory, 'extra.md'), 'Answer in French.');
      const run = parseRunArgs(
        [
          '--system-prompt',
          path.join(directory, 'system.md'),
          '--append-system-prompt',
          path.join(directory, 'extra.md'),
          'go',
        ],
        '/tmp',
      );
      expect(run.options).toMatchObject({
        systemPrompt: 'You review code.\n',
        appendSystemPrompt: 'Answer in French.',
      });
      const appendOnly = parseSendArgs([
        'conv-1',
        '--append-system-prompt',
        path.join(directory, 'extra.md'),
        'hi',
      ]);
      expect(appendOnly.options).toEqual({ appendSystemPrompt: 'Answer in French.' });
      expect(() =>
        parseRunArgs(['--system-prompt', path.join(directory, 'absent.md'), 'go'], '/tmp'),
      ).toThrow(new UsageError(`--system-prompt: cannot read ${path.join(directory, 'absent.md')}: ENOENT`));
      expect(() =>
        parseRunArgs(['--system', 'x', '--system-prompt', path.join(directory, 'system.md'), 'go'], '/tmp'),
      ).toThrow(new UsageError('give the system prompt once: --system TEXT or --system-prompt FILE'));
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  test('tool policy flags take comma-separated lists; --sender names who sends', () => {
    const run = parseRunArgs(
      [
        '--tool-profile',
        'coding',
        '--allow',
        'group:fs, exec',
        '--also-allow',
        'deploy',
        '--deny',
        'write',
        '--owners',
        'alice,bob',
        '--sender',
        'alice',
        'go',
      ],
      '/tmp',
    );
    expect(run.options).toEqual({
      workspace: '/tmp',
      profile: 'coding',
      allow: ['group:fs', 'exec'],
      alsoAllow: ['deploy'],
      deny: ['write'],
      owners: ['alice', 'bob'],
    });
    expect(run.sender).toBe('alice');
    // The tool profile's old flag, which cli.ts leaves to the command only for a tool profile's name.
    expect(parseRunArgs(['--profile', 'minimal', 'go'], '/tmp').options.profile).toBe('minimal');
    expect(parseRunArgs(['--allow', '', 'go'], '/tmp').options.allow).toEqual([]);
    expect(parseSendArgs(['--sender', 'ops', 'c-1', 'hi']).sender).toBe('ops');
    expect(parseSteerArgs(['--sender', 'ops', 'c-1', 'hi']).sender).toBe('ops');
  });

  test("--exec-security sets the conversation's exec security mode", () => {
    expect(parseRunArgs(['--exec-security', 'safe-bin', 'go'], '/tmp').options).toEqual({
      workspace: '/tmp',
      execSecurity: 'safe-bin',
    });
  });

  test('without --id a fresh conversation id is made', () => {
    expect(parseRunArgs(['hi']).conversationId).toMatch(/^conv-[0-9a-f-]{36}$/);
  });

  test.each([
    [['--approval', 'sometimes', 'hi'], '--approval takes auto or ask, got sometimes'],
    [['--max-tool-iterations', '0', 'hi'], '--max-tool-iterations takes a whole number of at least 1, got 0'],
    [['--approval'], "run: Option '--approval <value>' argument missing"],
    [['--frobnicate', 'hi'], "run: Unknown option '--frobnicate'"],
    [[], 'run needs a prompt'],
    [['--id', 'has space', 'hi'], 'invalid conversation id "has space"'],
    [
      ['--tool-profile', 'everything', 'hi'],
      '--tool-profile takes minimal, coding, messaging, full, got everything',
    ],
    [
      ['--tool-profile', 'coding', '--profile', 'full', 'hi'],
      'give the tool profile once: --tool-profile NAME',
    ],
    [['--exec-security', 'none', 'hi'], '--exec-security takes full, sandbox or safe-bin, got none'],
    [['--owners', ' , ', 'hi'], '--owners needs at least one name'],
  ])('%j is a usage error', (args, message) => {
    expect(usageError(() => parseRunArgs(args))).toContain(message);
  });
});

describe('send and steer', () => {
  test('send joins the words of the message and waits by default', () => {
    expect(parseSendArgs(['c-1', 'hello', 'there'])).toEqual({
      conversationId: 'c-1',
      text: 'hello there',
      wait: true,
      json: false,
      options: {},
    });
  });

  test('send --no-wait --json, with options for a conversation it starts', () => {
    expect(parseSendArgs(['--no-wait', '--json', '--approval', 'ask', 'c-1', 'hi'])).toMatchObject({
      wait: false,
      json: true,
      options: { approval: { mode: 'ask' } },
    });
  });

  test('steer takes an id and a message', () => {
    expect(parseSteerArgs(['c-2', 'stop,', 'do this'])).toEqual({
      conversationId: 'c-2',
      text: 'stop, do this',
      wait: true,
      json: false,
    });
    expect(parseSteerArgs(['--no-wait', 'c-2', 'x']).wait).toBe(false);
  });

  test.each([
    [parseSendArgs, [], 'send needs a conversation ID and a message'],
    [parseSendArgs, ['c-1'], 'send needs a message after the conversation ID'],
    [parseSendArgs, ['c-1', '   '], 'send needs a message after the conversation ID'],
    [parseSteerArgs, ['c-1'], 'steer needs a message after the conversation ID'],
    [parseSteerArgs, ['--model', 'x', 'c-1', 'hi'], "steer: Unknown option '--model'"],
  ])('%p %j is a usage error', (parse, args, message) => {
    expect(usageError(() => parse(args))).toContain(message);
  });
});

describe('approve', () => {
  test.each([
    [[], 'allow_once'],
    [['--always'], 'allow_always'],
    [['--reject'], 'reject_once'],
    [['--reject', '--always'], 'reject_always'],
  ])('flags %j decide %s', (flags, decision) => {
    expect(parseApproveArgs(['c-1', 'call_1', ...flags], me).decision.decision).toBe(decision);
  });

  test('--by defaults to the user at the terminal; --reason is passed on', () => {
    expect(parseApproveArgs(['c-1', 'call_1', '--reason', 'looks fine'], me)).toEqual({
      conversationId: 'c-1',
      json: false,
      decision: { toolCallId: 'call_1', decision: 'allow_once', by: 'alice', reason: 'looks fine' },
    });
    expect(parseApproveArgs(['--by', 'ops', 'c-1', 'call_1'], me).decision.by).toBe('ops');
  });

  test('--key names the private key that signs; --sha256 the arguments decided on', () => {
    expect(parseApproveArgs(['c-1', 'call_1', '--key', 'alice.pem', '--sha256', 'A'.repeat(64)], me)).toEqual(
      {
        conversationId: 'c-1',
        json: false,
        keyFile: 'alice.pem',
        decision: {
          toolCallId: 'call_1',
          decision: 'allow_once',
          by: 'alice',
          argumentsSha256: 'a'.repeat(64),
        },
      },
    );
  });

  test.each([
    [[], 'approve needs ID and TOOL_CALL_ID'],
    [['c-1'], 'approve needs TOOL_CALL_ID'],
    [['c-1', 'call_1', 'extra'], 'approve takes ID and TOOL_CALL_ID; unexpected "extra"'],
    [['c-1', 'call_1', '--by'], "approve: Option '--by <value>' argument missing"],
    [['c-1', 'call_1', '--once'], "approve: Unknown option '--once'"],
  ])('%j is a usage error', (args, message) => {
    expect(usageError(() => parseApproveArgs(args, me))).toContain(message);
  });
});

describe('budgets', () => {
  test('run and send take a budget of tokens, tool calls and a deadline; no flag, no budget', () => {
    expect(
      parseRunArgs(['--budget-tokens', '100', '--budget-tool-calls', '5', '--deadline', '90s', 'go'], '/w')
        .options.budget,
    ).toEqual({ tokens: 100, toolCalls: 5, deadlineMs: 90_000 });
    expect(parseRunArgs(['--deadline', '2h', 'go'], '/w').options.budget).toEqual({ deadlineMs: 7_200_000 });
    expect(parseSendArgs(['c-1', '--budget-tokens', '5000', 'hi']).options.budget).toEqual({ tokens: 5000 });
    expect(parseRunArgs(['go'], '/w').options.budget).toBeUndefined();
  });

  test.each([
    [['--budget-tokens', '0'], '--budget-tokens takes a whole number of at least 1, got 0'],
    [['--budget-tokens', 'lots'], '--budget-tokens takes a whole number of at least 1, got lots'],
    [['--budget-tool-calls', '2.5'], '--budget-tool-calls takes a whole number of at least 1, got 2.5'],
    [['--deadline', 'soon'], '--deadline takes a duration such as 90s, 30m, 12h or 2d, got soon'],
  ])('%j is a usage error', (flags, message) => {
    expect(usageError(() => parseRunArgs([...flags, 'go'], '/w'))).toBe(message);
  });

  test('approve raises a paused budget by an amount, and a reject cannot raise', () => {
    expect(parseApproveArgs(['c-1', 'budget-1', '--raise-tokens', '500'], me).decision).toEqual({
      toolCallId: 'budget-1',
      decision: 'allow_once',
      by: 'alice',
      raise: { tokens: 500 },
    });
    expect(parseApproveArgs(['c-1', 'budget-2', '--raise-deadline', '30m'], me).decision.raise).toEqual({
      deadlineMs: 1_800_000,
    });
    expect(parseApproveArgs(['c-1', 'budget-3', '--raise-tool-calls', '4'], me).decision.raise).toEqual({
      toolCalls: 4,
    });
    expect(
      usageError(() => parseApproveArgs(['c-1', 'budget-1', '--reject', '--raise-tokens', '5'], me)),
    ).toBe('approve: --reject stops the run; it cannot go with a --raise-… flag');
    expect(usageError(() => parseApproveArgs(['c-1', 'budget-1', '--raise-tokens', '-5'], me))).toContain(
      '--raise-tokens',
    );
  });
});

describe('abort, watch, status, list', () => {
  test('abort records who and why', () => {
    expect(parseAbortArgs(['c-1', '--reason', 'wrong path'], me)).toEqual({
      conversationId: 'c-1',
      json: false,
      input: { by: 'alice', reason: 'wrong path' },
    });
    expect(parseAbortArgs(['c-1', '--by', 'ops'], me).input).toEqual({ by: 'ops' });
  });

  test('watch follows one run unless --until-ended', () => {
    expect(parseWatchArgs(['c-1'])).toEqual({ conversationId: 'c-1', json: false, untilEnded: false });
    expect(parseWatchArgs(['--json', '--until-ended', 'c-1'])).toEqual({
      conversationId: 'c-1',
      json: true,
      untilEnded: true,
    });
  });

  test('status and list', () => {
    expect(parseStatusArgs(['c-1', '--json'])).toEqual({ conversationId: 'c-1', json: true });
    expect(parseListArgs([])).toEqual({ json: false, limit: 100 });
    expect(parseListArgs(['--json', '--limit', '5'])).toEqual({ json: true, limit: 5 });
  });

  test.each([
    [() => parseAbortArgs([], me), 'abort needs ID'],
    [() => parseWatchArgs(['c-1', 'c-2']), 'watch takes ID; unexpected "c-2"'],
    [() => parseStatusArgs([]), 'status needs ID'],
    [() => parseStatusArgs(['-bad']), "status: Unknown option '-b'"],
    [() => parseListArgs(['c-1']), 'list takes no arguments; unexpected "c-1"'],
    [() => parseListArgs(['--limit', 'all']), '--limit takes a whole number of at least 1, got all'],
  ])('%#: a usage error', (parse, message) => {
    expect(usageError(parse)).toContain(message);
  });
});

describe('help, version and end', () => {
  test('a command’s usage is its own lines, continuation lines included', () => {
    expect(usageOf('run')).toMatch(
      /^ {2}durable-agent run \[--id ID\][^]*--exec-security full\|sandbox\|safe-bin\][^]*\[--deadline DURATION\] "<prompt>"$/,
    );
    expect(
      usageOf('schedule')!
        .split('\n')
        .filter((line) => line.includes('durable-agent schedule')),
    ).toHaveLength(2);
    expect(usageOf('end')).toBe('  durable-agent end ID [--reason TEXT] [--json]');
    expect(usageOf('teleport')).toBeUndefined();
    for (const command of [
      'run',
      'send',
      'steer',
      'abort',
      'end',
      'approve',
      'watch',
      'status',
      'gateway',
      'worker',
    ])
      expect({ command, usage: usageOf(command) !== undefined }).toEqual({ command, usage: true });
  });

  test('end takes an id and a reason', () => {
    expect(parseEndArgs(['c-1', '--reason', 'done for today'])).toEqual({
      conversationId: 'c-1',
      reason: 'done for today',
      json: false,
    });
    expect(usageError(() => parseEndArgs([]))).toContain('end needs ID');
  });
});

describe('a2a', () => {
  test('card takes a card URL or an origin alone, the token from --token or the environment', () => {
    expect(
      parseA2AArgs(['card', 'https://agents.example'], { DURABLE_AGENT_A2A_TOKEN: 'env-token' }),
    ).toEqual({
      action: 'card',
      cardUrl: 'https://agents.example/.well-known/agent-card.json',
      token: 'env-token',
      json: false,
    });
    expect(
      parseA2AArgs(['card', 'http://127.0.0.1:9/cards/desk.json', '--token', 'flag', '--json'], {
        DURABLE_AGENT_A2A_TOKEN: 'env-token',
      }),
    ).toEqual({ action: 'card', cardUrl: 'http://127.0.0.1:9/cards/desk.json', token: 'flag', json: true });
  });

  test('send takes the text, a task to answer and a timeout', () => {
    expect(
      parseA2AArgs(['send', 'https://agents.example', 'green', '--task-id', 't-1', '--timeout', '30'], {}),
    ).toEqual({
      action: 'send',
      cardUrl: 'https://agents.example/.well-known/agent-card.json',
      text: 'green',
      taskId: 't-1',
      timeoutMs: 30_000,
      json: false,
    });
    expect(usageError(() => parseA2AArgs(['send', 'https://agents.example'], {}))).toContain(
      'a2a send needs TEXT',
    );
    expect(usageError(() => parseA2AArgs(['send', 'file:///etc/passwd', 'hi'], {}))).toContain(
      'not an http or https URL',
    );
    expect(usageError(() => parseA2AArgs(['card', 'x', '--task-id', 't'], {}))).toContain('are for send');
    expect(usageError(() => parseA2AArgs(['ping', 'https://agents.example'], {}))).toContain(
      'a2a takes card or send',
    );
  });
});

describe("Temporal's profile flags", () => {
  test('--profile and --config-file are taken from any command, as the temporal CLI takes them', () => {
    expect(
      takeConnectionFlags('list', ['--profile', 'cloud', '--json', '--config-file=conf/t.toml']),
    ).toEqual({
      args: ['--json'],
      profile: 'cloud',
      configFile: path.resolve('conf/t.toml'),
    });
    expect(takeConnectionFlags('run', ['--profile=staging', '--id', 'c', 'hi'])).toEqual({
      args: ['--id', 'c', 'hi'],
      profile: 'staging',
    });
    // After `--` everything is the command's.
    expect(takeConnectionFlags('run', ['--', '--profile', 'x'])).toEqual({ args: ['--', '--profile', 'x'] });
  });

  test("on run, send and schedule a tool profile's name after --profile still means the tool profile, with a warning", () => {
    const taken = takeConnectionFlags('send', ['c-1', '--profile', 'coding', 'hi']);
    expect(taken.args).toEqual(['c-1', '--profile', 'coding', 'hi']);
    expect(taken.profile).toBeUndefined();
    expect(taken.warning).toMatch(
      /--profile coding for the tool profile is deprecated: use --tool-profile coding/,
    );
    expect(takeConnectionFlags('list', ['--profile', 'coding']).profile).toBe('coding');
  });

  test.each([[['--profile']], [['--config-file', '--json']], [['--profile=']]])(
    '%j is a usage error',
    (args) => {
      expect(usageError(() => takeConnectionFlags('list', args))).toMatch(
        /list: --(profile|config-file) needs a value/,
      );
    },
  );
});

describe('cluster', () => {
  test('start takes --tls or --no-tls; without either it serves as it was last started', () => {
    expect(parseClusterArgs(['start', '--tls', '--dir', '/c'], '/d')).toEqual({
      action: 'start',
      dir: '/c',
      tls: true,
    });
    expect(parseClusterArgs(['start', '--no-tls'], '/d')).toEqual({ action: 'start', dir: '/d', tls: false });
    expect(parseClusterArgs(['start'], '/d')).toEqual({ action: 'start', dir: '/d' });
  });

  test('start takes --host, an IPv4 address for the services to listen on', () => {
    expect(parseClusterArgs(['start', '--host', '10.0.0.5', '--port', '7300'], '/d')).toEqual({
      action: 'start',
      dir: '/d',
      host: '10.0.0.5',
      port: 7300,
    });
  });

  test.each([
    [['status', '--tls'], 'cluster: --tls is for start'],
    [['start', '--tls', '--no-tls'], 'cluster: --tls or --no-tls, not both'],
    [['stop', '--host', '10.0.0.5'], 'cluster: --host is for start'],
    [['start', '--host', 'db.example'], '--host takes an IPv4 address of this machine, got "db.example"'],
    [['start', '--host', '0.0.0.0'], '--host takes an IPv4 address of this machine, got "0.0.0.0"'],
  ])('%j is a usage error', (args, message) => {
    expect(usageError(() => parseClusterArgs(args, '/d'))).toContain(message);
  });
});
