import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { AgentEvent } from '../../src/shared/events';
import { TOOL_GROUPS, TOOL_PROFILES } from '../../src/shared/tool-catalog';
import { builtinTools } from '../../src/tools/builtin/builtin-tools';
import { defineTool, textResult } from '../../src/tools/tool';
import { ask } from '../support/ask';
import { nockModel } from '../support/nock-model';
import { useNockedHarness } from '../support/nocked-harness';
import type { ChatRequest } from '../support/scripted-model';
import { echoTool } from '../support/test-tools';

/** Targets `deploy` was run for: a test checks whether a refused call really did not run. */
const deployed: string[] = [];
const deployTool = defineTool({
  name: 'deploy',
  label: 'Deploy',
  description: 'Deploys to a target.',
  parameters: z.object({ target: z.string() }),
  category: 'other',
  idempotent: false,
  risk: 'low',
  ownerOnly: true,
  async execute(_id, params) {
    deployed.push(params.target);
    return textResult(`deployed ${params.target}`);
  },
});

const harness = useNockedHarness([echoTool, deployTool]);
const WORKER_TOOLS = [...builtinTools().map((tool) => tool.name), 'echo', 'deploy'];

const newId = () => `conv-${randomUUID()}`;
const offeredIn = (request: ChatRequest | undefined) =>
  (request?.tools ?? []).map((tool) => tool.function.name);
/** What the worker has of `entries` (tool names and groups), sorted as the model is shown them. */
const workerHas = (entries: readonly string[], except: string[] = []) => {
  const names = new Set(entries.flatMap((entry) => TOOL_GROUPS[entry] ?? [entry]));
  return WORKER_TOOLS.filter((name) => names.has(name) && !except.includes(name)).sort();
};
const eventsOfType = <T extends AgentEvent['type']>(seen: AgentEvent[], type: T) =>
  seen.filter((event) => event.type === type) as Extract<AgentEvent, { type: T }>[];
const toolResults = (request: ChatRequest | undefined) =>
  Object.fromEntries(
    (request?.messages ?? [])
      .filter((m) => m.role === 'tool')
      .map((m) => [m.tool_call_id, m.content as string]),
  );

test('without a profile the model is offered every tool the worker has', async () => {
  const script = nockModel([{ text: 'Hello.' }]);
  await ask(harness().agent, newId(), 'Hi');
  expect(offeredIn(script.requests[0])).toEqual([...WORKER_TOOLS].sort());
});

test('profile coding: exactly the coding tools of the catalog this worker has', async () => {
  const script = nockModel([{ text: 'Ready to code.' }]);
  const { finished, seen } = await ask(harness().agent, newId(), 'Hi', { options: { profile: 'coding' } });
  expect(finished.outcome).toBe('answered');
  const offered = offeredIn(script.requests[0]);
  expect(offered).toEqual(workerHas(TOOL_PROFILES.coding!));
  expect(offered).toEqual(expect.arrayContaining(['edit', 'exec', 'read', 'write']));
  expect(offered).not.toContain('echo');
  expect(offered).not.toContain('web_fetch');
  expect(eventsOfType(seen, 'warning')).toEqual([]);
});

test('profile minimal with alsoAllow, and allow/deny on the full set', async () => {
  const script = nockModel([{ text: 'Minimal.' }, { text: 'Files.' }]);
  await ask(harness().agent, newId(), 'Hi', { options: { profile: 'minimal', alsoAllow: ['echo'] } });
  expect(offeredIn(script.requests[0])).toEqual(workerHas([...TOOL_PROFILES.minimal!, 'echo']));

  await ask(harness().agent, newId(), 'Hi', {
    options: { allow: ['group:fs', 'Echo'], deny: ['write', 'apply_patch'] },
  });
  expect(offeredIn(script.requests[1])).toEqual(workerHas(['group:fs', 'echo'], ['write', 'apply_patch']));
});

test('entries that do nothing are reported as warnings; a tool not offered cannot be called', async () => {
  await writeFile(path.join(harness().workspace, 'policy-notes.txt'), 'kept\n');
  const script = nockModel([
    {
      toolCalls: [
        { id: 'call_fetch', name: 'web_fetch', arguments: { url: 'https://example.com' } },
        // Claude Code's parameter name, padded: normalised to `path` before the tool sees it.
        { id: 'call_read', name: 'read', arguments: { file_path: ' policy-notes.txt ' } },
      ],
    },
    { text: 'Done.' },
  ]);
  const { finished, seen } = await ask(harness().agent, newId(), 'Read it', {
    options: { profile: 'coding', allow: ['read', 'web_fetch', 'raed'] },
  });
  expect(finished).toMatchObject({ outcome: 'answered', answer: 'Done.' });
  expect(offeredIn(script.requests[0])).toEqual(['read']);
  expect(eventsOfType(seen, 'warning').map((event) => event.message)).toEqual([
    'tool policy (conversation): "web_fetch" in allow has no effect: already removed by profile coding',
    'tool policy (conversation): unknown tool "raed" in allow',
  ]);
  const results = toolResults(script.requests[1]);
  expect(JSON.parse(results.call_fetch!)).toEqual({
    status: 'error',
    tool: 'web_fetch',
    error: 'Tool not found: web_fetch. Available tools: read',
  });
  expect(results.call_read).toBe('kept\n');
});

test('ownerOnly: hidden from and refused to a non-owner, offered to and run for an owner', async () => {
  const id = newId();
  const script = nockModel([
    (request) => {
      expect(offeredIn(request)).not.toContain('deploy');
      return { toolCalls: [{ id: 'call_bob', name: 'deploy', arguments: { target: 'prod' } }] };
    },
    { text: 'Only an owner may deploy.' },
    (request) => {
      expect(offeredIn(request)).toContain('deploy');
      return { toolCalls: [{ id: 'call_alice', name: 'deploy', arguments: { target: 'staging' } }] };
    },
    { text: 'Deployed.' },
  ]);
  const options = { owners: ['alice'] };

  const fromBob = await ask(harness().agent, id, 'Deploy to prod', { options, sender: 'bob' });
  expect(fromBob.finished.answer).toBe('Only an owner may deploy.');
  expect(JSON.parse(toolResults(script.requests[1]).call_bob!)).toEqual({
    status: 'error',
    tool: 'deploy',
    error: 'Tool restricted to owner senders.',
  });
  expect(deployed).toEqual([]);

  const fromAlice = await ask(harness().agent, id, 'Deploy to staging', { sender: 'alice' });
  expect(fromAlice.finished.answer).toBe('Deployed.');
  expect(toolResults(script.requests[3]).call_alice).toBe('deployed staging');
  expect(deployed).toEqual(['staging']);
  expect(script.exhausted).toBe(false);

  const transcript = (await harness().agent.state(id)).transcript;
  expect(transcript.filter((m) => m.role === 'user').map((m) => m.role === 'user' && m.sender)).toEqual([
    'bob',
    'alice',
  ]);
});

test('ownerOnly in sub-agents: a non-owner’s run spawns a child without the tool, an owner’s run a child with it', async () => {
  const id = newId();
  const script = nockModel([
    { toolCalls: [{ id: 'call_spawn_bob', name: 'sessions_spawn', arguments: { task: 'Deploy prod' } }] },
    (request) => {
      expect(offeredIn(request)).not.toContain('deploy');
      return { toolCalls: [{ id: 'call_child_bob', name: 'deploy', arguments: { target: 'prod' } }] };
    },
    { text: 'Could not deploy.' },
    { text: 'The sub-agent could not deploy.' },
    {
      toolCalls: [{ id: 'call_spawn_alice', name: 'sessions_spawn', arguments: { task: 'Deploy staging' } }],
    },
    (request) => {
      expect(offeredIn(request)).toContain('deploy');
      return { toolCalls: [{ id: 'call_child_alice', name: 'deploy', arguments: { target: 'staging' } }] };
    },
    { text: 'Deployed staging.' },
    { text: 'The sub-agent deployed.' },
  ]);
  const options = { owners: ['alice'], approval: { mode: 'auto' as const } };
  const fromBob = await ask(harness().agent, id, 'Have a sub-agent deploy prod', { options, sender: 'bob' });
  expect(fromBob.finished.answer).toBe('The sub-agent could not deploy.');
  expect(JSON.parse(toolResults(script.requests[2]).call_child_bob!)).toMatchObject({
    status: 'error',
    tool: 'deploy',
  });
  expect(deployed).not.toContain('prod');

  const fromAlice = await ask(harness().agent, id, 'Have a sub-agent deploy staging', { sender: 'alice' });
  expect(fromAlice.finished.answer).toBe('The sub-agent deployed.');
  expect(toolResults(script.requests[6]).call_child_alice).toBe('deployed staging');
  expect(script.exhausted).toBe(false);
});
