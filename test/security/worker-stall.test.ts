import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ChatRequest, ScriptedReply, ScriptedToolCall } from '../support/scripted-model';
import { nockModel } from '../support/nock-model';
import { useNockedHarness } from '../support/nocked-harness';
import { ask } from '../support/ask';

/**
 * One worker serves every conversation, so no call of one may stall the others. Conversation A
 * sends what used to freeze a worker: backtracking regexes on long lines, reads of FIFOs nobody
 * writes (each used to hold one of libuv's four pool threads for ever), an edit of a file larger
 * than memory should take, and commands whose leftovers keep the output pipes open. Conversation B
 * runs at the same moment on the same worker: a slow command whose progress must keep flowing,
 * and file tools that need libuv's pool.
 */
const harness = useNockedHarness([]);
jest.setTimeout(240_000);

const LEFTOVER = `${900_000 + Math.floor(Math.random() * 99_999)}`;

const userText = (request: ChatRequest) =>
  request.messages.find((message) => message.role === 'user')?.content ?? '';
const hasToolResults = (request: ChatRequest) => request.messages.some((message) => message.role === 'tool');

test('a conversation trying to stall the worker does not stop another one on it', async () => {
  const workspace = harness().workspace;
  const fifos = Array.from({ length: 6 }, (_, index) => `fifo-${index}`);
  for (const fifo of fifos) execFileSync('mkfifo', [path.join(workspace, fifo)]);
  await writeFile(
    path.join(workspace, 'long-lines.txt'),
    Array.from({ length: 2_000 }, () => `${'a'.repeat(95)}!`).join('\n'),
  );
  await writeFile(path.join(workspace, 'huge.txt'), Buffer.alloc(12 * 1024 * 1024, 'x\n'));
  await writeFile(path.join(workspace, 'notes.txt'), 'alpha\nbeta\n');

  const stallCalls: ScriptedToolCall[] = [
    ...['(a+)+$', '(a|aa)+$', '(\\w+\\s?)*$', '(.*a){30}'].map((pattern, index) => ({
      id: `call_grep_${index}`,
      name: 'grep',
      arguments: { pattern, path: 'long-lines.txt' },
    })),
    ...fifos.map((fifo, index) => ({
      id: `call_fifo_read_${index}`,
      name: 'read',
      arguments: { path: fifo },
    })),
    { id: 'call_fifo_edit', name: 'edit', arguments: { path: fifos[0], old_string: 'a', new_string: 'b' } },
    { id: 'call_huge_edit', name: 'edit', arguments: { path: 'huge.txt', old_string: 'x', new_string: 'y' } },
    {
      id: 'call_leftover',
      name: 'exec',
      arguments: { command: `setsid sleep ${LEFTOVER} & echo left` },
    },
    {
      id: 'call_leftover_timeout',
      name: 'exec',
      arguments: { command: `(setsid sh -c "sleep ${LEFTOVER}" &); sleep 60`, timeout: 2 },
    },
  ];
  const tickingCalls: ScriptedToolCall[] = [
    {
      id: 'call_ticks',
      name: 'exec',
      arguments: { command: 'for i in 1 2 3 4 5; do echo "tick $i"; echo "$i" >> ticks.log; sleep 1; done' },
    },
    { id: 'call_read_notes', name: 'read', arguments: { path: 'notes.txt' } },
    { id: 'call_grep_notes', name: 'grep', arguments: { pattern: 'beta', path: 'notes.txt' } },
  ];
  // The two conversations' model calls interleave in any order: each reply is chosen by whose it is.
  const respond = (request: ChatRequest): ScriptedReply => {
    const isStaller = userText(request) === 'stall';
    if (hasToolResults(request)) return { text: isStaller ? 'stalled nothing' : 'ticked' };
    return { toolCalls: isStaller ? stallCalls : tickingCalls };
  };
  nockModel([respond, respond, respond, respond]);

  const stallerId = `conv-stall-${randomUUID()}`;
  const tickerId = `conv-tick-${randomUUID()}`;
  const [staller, ticker] = await Promise.all([
    ask(harness().agent, stallerId, 'stall', { options: { approval: { mode: 'auto' } } }),
    ask(harness().agent, tickerId, 'tick', { options: { approval: { mode: 'auto' } } }),
  ]);

  expect(ticker.finished.outcome).toBe('answered');
  expect(staller.finished.outcome).toBe('answered');

  // The slow command reported its progress while it ran, and ran exactly once (no heartbeat was
  // missed, so it was never retried).
  const tickProgress = ticker.seen.flatMap((event) =>
    event.type === 'tool_execution_update' && event.toolCallId === 'call_ticks' ? [event.text ?? ''] : [],
  );
  expect(tickProgress.some((text) => text.includes('tick'))).toBe(true);
  expect((await readFile(path.join(workspace, 'ticks.log'), 'utf8')).trim().split('\n')).toEqual([
    '1',
    '2',
    '3',
    '4',
    '5',
  ]);

  const resultsOf = async (id: string) =>
    new Map(
      (await harness().agent.state(id)).transcript.flatMap((message) =>
        message.role === 'toolResult'
          ? [
              [
                message.toolCallId,
                {
                  isError: message.isError,
                  text: message.content.map((block) => (block.type === 'text' ? block.text : '')).join(''),
                },
              ] as const,
            ]
          : [],
      ),
    );
  const tickerResults = await resultsOf(tickerId);
  expect(tickerResults.get('call_ticks')).toMatchObject({
    isError: false,
    text: expect.stringContaining('tick 5'),
  });
  expect(tickerResults.get('call_read_notes')).toMatchObject({
    isError: false,
    text: expect.stringContaining('beta'),
  });
  expect(tickerResults.get('call_grep_notes')).toMatchObject({
    isError: false,
    text: expect.stringContaining('beta'),
  });

  // Every stalling call was answered: the regexes ran (linearly), the FIFOs and the huge edit were refused.
  const stallerResults = await resultsOf(stallerId);
  for (const call of stallCalls)
    expect({ id: call.id, answered: stallerResults.has(call.id!) }).toEqual({ id: call.id, answered: true });
  for (const call of stallCalls.filter((call) => call.name === 'read' || call.name === 'edit'))
    expect({ id: call.id, isError: stallerResults.get(call.id!)!.isError }).toEqual({
      id: call.id,
      isError: true,
    });
  expect(stallerResults.get('call_leftover')).toMatchObject({ text: expect.stringContaining('left') });
  expect(stallerResults.get('call_leftover_timeout')!.isError).toBe(true);

  // What the commands left behind was stopped with them.
  const leftovers = () => {
    try {
      return execFileSync('pgrep', ['-f', `sleep ${LEFTOVER}`], { encoding: 'utf8' }).trim();
    } catch {
      return '';
    }
  };
  for (let attempt = 0; attempt < 50 && leftovers() !== ''; attempt++)
    await new Promise((r) => setTimeout(r, 100));
  expect(leftovers()).toBe('');
});
