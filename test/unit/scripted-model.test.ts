import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { ModelScript, failIfAnyModelScriptThrew } from '../support/scripted-model';
import { startScriptedModelServer } from '../support/scripted-model-server';

jest.setTimeout(60_000);

const request = { model: 'scripted-model', messages: [{ role: 'user', content: 'hi' }] };
const failingStep = () => {
  expect({ tool: 'read' }).toEqual({ tool: 'write' });
  return { text: 'unreachable' };
};

test('a reply callback that throws: the request gets a 400 naming the error, and the helper throws the error itself', () => {
  const script = new ModelScript([failingStep, { text: 'next' }]);
  const answer = script.answer(request);
  expect(answer.status).toBe(400);
  expect(JSON.parse(answer.body).error.message).toMatch(
    /^the scripted model's step 1 threw \(the test fails with this error\): expect\(received\)\.toEqual\(expected\)/,
  );
  expect(script.callbackErrors).toHaveLength(1);
  expect(failIfAnyModelScriptThrew).toThrow(/expect\(received\)\.toEqual\(expected\)[\s\S]*"write"/);
  // Reported once: the next check (the hook after this test) finds nothing.
  expect(failIfAnyModelScriptThrew).not.toThrow();
  expect(script.answer(request).status).toBe(200);
});

test('the scripted model server records its callbacks’ errors the same way', async () => {
  const server = await startScriptedModelServer([failingStep]);
  try {
    const response = await fetch(`${server.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(request),
    });
    expect(response.status).toBe(400);
    expect(server.script.callbackErrors).toHaveLength(1);
    expect(failIfAnyModelScriptThrew).toThrow(/expect\(received\)\.toEqual\(expected\)/);
  } finally {
    await server.close();
  }
});

test('a test whose callback failed an assertion fails with that assertion, though its body passed', async () => {
  // The fixture runs in a Jest of its own (no global setup: it needs no Temporal), as any test would.
  const root = path.join(__dirname, '..', '..');
  const config = {
    rootDir: root,
    testEnvironment: 'node',
    transform: { '^.+\\.ts$': ['@swc/jest'] },
    testMatch: ['<rootDir>/test/unit/fixtures/*.fixture.ts'],
  };
  const run = await promisify(execFile)(
    process.execPath,
    [
      path.join(root, 'node_modules', 'jest', 'bin', 'jest.js'),
      '--config',
      JSON.stringify(config),
      '--ci',
      '--colors=false',
      path.join(__dirname, 'fixtures', 'callback-assertion.fixture.ts'),
    ],
    { cwd: root, env: { ...process.env, FORCE_COLOR: '0' } },
  ).then(
    () => ({ failed: false, output: '' }),
    (error: { stdout: string; stderr: string }) => ({ failed: true, output: error.stdout + error.stderr }),
  );
  expect(run.failed).toBe(true);
  expect(run.output).toContain('✕ a reply callback fails an assertion the test body never sees');
  expect(run.output).toContain('expect(received).toBe(expected)');
  expect(run.output).toContain('"callback-assertion-marker"');
  expect(run.output).toMatch(/Tests:\s+1 failed, 1 total/);
});
