import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import nock from 'nock';
import { ask } from '../support/ask';
import { nockModel } from '../support/nock-model';
import { useNockedHarness } from '../support/nocked-harness';
import { toolResultIn } from '../support/scripted-model';

const harness = useNockedHarness([]);

const toolResult = toolResultIn;

/** Whether a process still runs; a zombie waiting to be reaped counts as gone. */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

test('exec in the background returns a process id; process writes, polls, lists and kills it, and only its conversation can', async () => {
  let processId = '';
  let pid = 0;
  const script = nockModel([
    {
      toolCalls: [
        {
          id: 'call_start',
          name: 'exec',
          arguments: { command: 'read line; echo "got $line"; sleep 60', background: true },
        },
      ],
    },
    (request) => {
      const started = toolResult(request, 'call_start');
      const match = /started background process (\S+) \(pid (\d+)\)/.exec(started);
      if (!match) throw new Error(`unexpected exec result: ${started}`);
      processId = match[1]!;
      pid = Number(match[2]);
      return {
        toolCalls: [
          {
            id: 'call_write',
            name: 'process',
            arguments: { action: 'write', id: processId, input: 'hello\n' },
          },
        ],
      };
    },
    () => ({
      toolCalls: [
        { id: 'call_poll', name: 'process', arguments: { action: 'poll', id: processId, wait: 20 } },
      ],
    }),
    () => ({ toolCalls: [{ id: 'call_list', name: 'process', arguments: { action: 'list' } }] }),
    () => ({
      toolCalls: [{ id: 'call_kill', name: 'process', arguments: { action: 'kill', id: processId } }],
    }),
    { text: 'Done with the process.' },
  ]);
  const id = `conv-${randomUUID()}`;
  const { finished } = await ask(harness().agent, id, 'Run it in the background', {
    options: { approval: { mode: 'auto' } },
  });
  expect(finished).toMatchObject({ outcome: 'answered', answer: 'Done with the process.' });

  expect(toolResult(script.requests[2]!, 'call_write')).toBe(`wrote 6 bytes to ${processId}`);
  expect(toolResult(script.requests[3]!, 'call_poll')).toMatch(
    new RegExp(`^${processId}: running \\(pid ${pid}, \\d+s\\)\\ngot hello\\n$`),
  );
  expect(toolResult(script.requests[4]!, 'call_list')).toMatch(
    new RegExp(`^${processId}  running \\(pid ${pid}, \\d+s\\)  read line; echo "got \\$line"; sleep 60$`),
  );
  expect(toolResult(script.requests[5]!, 'call_kill')).toMatch(
    new RegExp(`^${processId}: killed by SIGTERM, killed on request after \\d+s$`),
  );
  expect(isRunning(pid)).toBe(false);

  // Another conversation on the same worker neither sees nor reaches it.
  nock.cleanAll();
  const other = nockModel([
    { toolCalls: [{ id: 'call_steal', name: 'process', arguments: { action: 'poll', id: processId } }] },
    { toolCalls: [{ id: 'call_list_other', name: 'process', arguments: { action: 'list' } }] },
    { text: 'Not mine.' },
  ]);
  await ask(harness().agent, `conv-${randomUUID()}`, 'Peek at it', {
    options: { approval: { mode: 'auto' } },
  });
  expect(JSON.parse(toolResult(other.requests[1]!, 'call_steal'))).toEqual({
    status: 'error',
    tool: 'process',
    error: `no background process ${processId} in this conversation (see action "list")`,
  });
  expect(toolResult(other.requests[2]!, 'call_list_other')).toBe(
    'no background processes in this conversation',
  );
});

test('a background command the denylist refuses never starts', async () => {
  const script = nockModel([
    { toolCalls: [{ id: 'call_sudo', name: 'exec', arguments: { command: 'SUDO id', background: true } }] },
    { text: 'Refused.' },
  ]);
  await ask(harness().agent, `conv-${randomUUID()}`, 'Be root', { options: { approval: { mode: 'auto' } } });
  expect(JSON.parse(toolResult(script.requests[1]!, 'call_sudo'))).toEqual({
    status: 'error',
    tool: 'exec',
    error: 'command refused: it matches the denylist (sudo)',
  });
});

test('a conversation in safe-bin mode runs only allowed programs', async () => {
  const script = nockModel([
    {
      toolCalls: [
        { id: 'call_allowed', name: 'exec', arguments: { command: 'echo fine | wc -l' } },
        { id: 'call_refused', name: 'exec', arguments: { command: 'touch made-it' } },
      ],
    },
    { text: 'One of two.' },
  ]);
  await ask(harness().agent, `conv-${randomUUID()}`, 'Try both', {
    options: { approval: { mode: 'auto' }, execSecurity: 'safe-bin' },
  });
  expect(toolResult(script.requests[1]!, 'call_allowed')).toBe('exit code 0\n1\n');
  const refused = JSON.parse(toolResult(script.requests[1]!, 'call_refused')) as { error: string };
  expect(refused.error).toMatch(/^command refused in safe-bin mode: touch is not an allowed program/);
});
