import path from 'node:path';
import { McpConnection } from '../../src/mcp/mcp-connection';
import { BackgroundProcesses } from '../../src/tools/exec/background-processes';
import { childEnvironment } from '../../src/tools/exec/child-environment';
import { createRuntimeTools } from '../../src/tools/exec/runtime-tools';
import type { AgentTool } from '../../src/tools/tool';
import { Workspace } from '../../src/tools/workspace';
import { execEnvPassFromEnv } from '../../src/worker/exec-settings';
import { makeTempDir, removeDir, resultText, runTool } from './tool-harness';

jest.setTimeout(30_000);

/** What the worker holds and no command may see. */
const SECRETS = {
  OPENAI_API_KEY: 'sk-secret-openai',
  TEMPORAL_API_KEY: 'secret-temporal',
  AWS_SECRET_ACCESS_KEY: 'secret-aws',
  PGPASSWORD: 'secret-postgres',
  DURABLE_AGENT_RAP_SECRET: 'secret-rap',
};
const SECRET_VALUES = Object.values(SECRETS);

describe('childEnvironment', () => {
  const worker = {
    ...SECRETS,
    PATH: '/usr/bin:/bin',
    HOME: '/home/agent',
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    LC_TIME: 'en_GB.UTF-8',
    LC_SECRET: 'not a locale',
    TERM: 'xterm',
    TZ: 'UTC',
    USER: 'agent',
    TMPDIR: '/tmp',
    SHELL: '/bin/bash',
    NODE_OPTIONS: '--require /tmp/evil.js',
    GIT_TOKEN: 'ghp-token',
    MISSING: undefined,
  };

  test('passes the base variables, locale categories included, and nothing else', () => {
    expect(childEnvironment(worker)).toEqual({
      PATH: '/usr/bin:/bin',
      HOME: '/home/agent',
      LANG: 'C.UTF-8',
      LC_ALL: 'C.UTF-8',
      LC_TIME: 'en_GB.UTF-8',
      TERM: 'xterm',
      TZ: 'UTC',
      USER: 'agent',
      TMPDIR: '/tmp',
    });
  });

  test('adds exactly the names the operator passes, present ones only', () => {
    const env = childEnvironment(worker, ['GIT_TOKEN', 'MISSING', 'NOT_SET']);
    expect(env.GIT_TOKEN).toBe('ghp-token');
    expect(Object.keys(env)).not.toContain('MISSING');
    expect(Object.keys(env)).not.toContain('NOT_SET');
    for (const name of Object.keys(SECRETS)) expect(env).not.toHaveProperty(name);
    expect(env).not.toHaveProperty('NODE_OPTIONS');
  });

  test('AGENT_EXEC_ENV_PASS names variables exactly', () => {
    expect(execEnvPassFromEnv({})).toEqual([]);
    expect(execEnvPassFromEnv({ AGENT_EXEC_ENV_PASS: ' GIT_TOKEN, NPM_CONFIG_REGISTRY ,' })).toEqual([
      'GIT_TOKEN',
      'NPM_CONFIG_REGISTRY',
    ]);
    expect(() => execEnvPassFromEnv({ AGENT_EXEC_ENV_PASS: 'AWS_*' })).toThrow(/exactly/);
    expect(() => execEnvPassFromEnv({ AGENT_EXEC_ENV_PASS: 'A=B' })).toThrow(/exactly/);
    expect(() => execEnvPassFromEnv({ AGENT_EXEC_ENV_PASS: 'DURABLE_AGENT_RUN' })).toThrow(/sets it/);
  });
});

describe('what a child process sees of the worker environment', () => {
  const saved = { ...process.env };
  let root: string;
  let workspace: Workspace;
  let processes: BackgroundProcesses;

  beforeEach(async () => {
    Object.assign(process.env, SECRETS, { LC_ALL: 'C', GIT_TOKEN: 'ghp-passed' });
    root = await makeTempDir('durable-agent-unit-env-');
    workspace = new Workspace(root);
    processes = new BackgroundProcesses();
  });
  afterEach(async () => {
    processes.killAll();
    for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
    Object.assign(process.env, saved);
    await removeDir(root);
  });

  function expectNoSecret(text: string): void {
    for (const name of Object.keys(SECRETS)) expect(text).not.toContain(`${name}=`);
    for (const value of SECRET_VALUES) expect(text).not.toContain(value);
  }

  test('exec in the foreground: env shows no secret; LC_ALL and passed names come through', async () => {
    const [exec] = createRuntimeTools({ processes }) as [AgentTool];
    const text = resultText(await runTool(exec, workspace, { command: 'env' }));
    expect(text).toMatch(/^exit code 0\n/);
    expectNoSecret(text);
    expect(text).toContain('\nLC_ALL=C\n');
    expect(text).not.toContain('GIT_TOKEN');

    const [withPass] = createRuntimeTools({
      processes,
      childEnv: childEnvironment(process.env, execEnvPassFromEnv({ AGENT_EXEC_ENV_PASS: 'GIT_TOKEN' })),
    }) as [AgentTool];
    const passed = resultText(await runTool(withPass, workspace, { command: 'env' }));
    expectNoSecret(passed);
    expect(passed).toContain('\nGIT_TOKEN=ghp-passed\n');
  });

  test('exec in the background: env shows no secret', async () => {
    const [exec] = createRuntimeTools({ processes }) as [AgentTool];
    const started = await runTool(exec, workspace, { command: 'env', background: true });
    const id = (started.details as { id: string }).id;
    let text = '';
    for (;;) {
      const { summary, output } = await processes.poll('c', id, { waitMs: 2_000, maxBytes: 1_000_000 });
      text += output.text;
      if (summary.status === 'exited' && summary.unreadBytes === 0) break;
    }
    expect(text).toContain('PATH=');
    expectNoSecret(text);
  });

  test('an MCP stdio server sees the default environment and its configured env only', async () => {
    const everything = path.join(
      path.dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')),
      'dist',
      'index.js',
    );
    const connection = new McpConnection('everything', {
      command: process.execPath,
      args: [everything, 'stdio'],
      env: { CONFIGURED: 'for-the-server' },
    });
    try {
      const result = await connection.use((client) => client.callTool({ name: 'get-env', arguments: {} }));
      const text = (result.content as { type: string; text: string }[])[0]!.text;
      const env = JSON.parse(text) as Record<string, string>;
      expect(env.CONFIGURED).toBe('for-the-server');
      expect(env.PATH).toBe(process.env.PATH);
      expectNoSecret(text);
      expect(env).not.toHaveProperty('GIT_TOKEN');
    } finally {
      await connection.close();
    }
  });
});
