/**
 * Records one history per kind of run with the current workflow code into test/histories/.
 * Run it (`npm run record-histories`) when adding a kind of run: it records only the kinds that
 * have no file yet (or those named: `npm run record-histories -- steer abort`). Never re-record to
 * paper over a replay failure: a history that no longer replays means running conversations would
 * break, which is what patched() is for.
 */
import type { ChildProcess } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import OpenAI from 'openai';
import type { ActivityDeps } from '../../src/activities/create-activities';
import { AgentClient } from '../../src/client/agent-client';
import { forkStart, startFork } from '../../src/client/fork-start';
import { fetchConversationHistories } from '../../src/history/conversation-history';
import { signDecision } from '../../src/client/sign-decision';
import { rawPublicKey } from '../../src/worker/floor-settings';
import type { ApprovalDecision } from '../../src/shared/approvals';
import {
  type UserMessageInput,
  abortUpdate,
  approveSignal,
  approveUpdate,
  compactUpdate,
  pendingApprovalsQuery,
  statusQuery,
  steerUpdate,
  userMessageSignal,
} from '../../src/shared/conversation-api';
import type { ConversationOptionsInput } from '../../src/shared/conversation-options';
import { builtinTools } from '../../src/tools/builtin/builtin-tools';
import { ToolRegistry } from '../../src/tools/registry';
import { WorkerDeployments } from '../../src/client/worker-deployments';
import type { AgentWorker } from '../../src/worker/agent-worker';
import { createAgentWorker } from '../../src/worker/create-worker';
import { startDevServer } from '../../src/temporal-server/dev-server';
import { freePort } from '../../src/platform/free-port';
import { bundleAgentWorkflows } from '../../src/worker/workflow-bundle';
import { SUMMARY_SYSTEM_PROMPT } from '../../src/shared/compaction';
import { ApprovalPolicySchema } from '../../src/shared/approval-policy';
import type { ChatRequest, ScriptStep } from './scripted-model';
import { startScriptedModelServer } from './scripted-model-server';
import { killWorkerProcess, spawnWorkerProcess } from './spawn-worker-process';
import { localTickerTool } from './test-tools';
import { waitFor } from './test-worker';
import { waitForEvent, waitForHeartbeat } from './wait-for-event';

/** What a scenario can do to its conversation besides sending messages. */
interface Driver {
  /** Sends a message and waits until its run finishes. */
  say(text: string): Promise<void>;
  /** Sends a message without waiting. */
  send(text: string): Promise<void>;
  handle: WorkflowHandle;
  runFinished(run: number): Promise<void>;
  pending(toolCallId: string): Promise<void>;
  agent: AgentClient;
  /** The conversation's id (`history-<scenario>`). */
  id: string;
  client: Client;
  /** For a versioned scenario: starts a worker of a second build and makes that build current. */
  deployNewBuild(): Promise<void>;
}

/** What a scenario can do before the recording's worker polls its task queue. */
interface Prologue extends Pick<Driver, 'say' | 'agent' | 'id'> {
  /**
   * Starts a worker of the task queue in a process of its own (test/support/worker-process.ts), which
   * the scenario can SIGKILL: the recording's worker then takes over from a worker that is gone.
   */
  startWorkerProcess(env?: Record<string, string>): Promise<ChildProcess>;
}

interface Scenario {
  name: string;
  options?: ConversationOptionsInput;
  model: ScriptStep[];
  /** Drives the conversation's beginning before the recording's worker polls (see Prologue). */
  prologue?: (conversation: Prologue) => Promise<void>;
  drive: (conversation: Driver) => Promise<void>;
  /** Also record the conversation's first run (as `<name>-first-run.json`) when it continued as new. */
  recordFirstRun?: boolean;
  /** The worker belongs to a Worker Deployment (build `build-1`, current), so a new build can be deployed. */
  versioned?: boolean;
  /** What the worker has besides the defaults (approver keys, webhooks), and how to let go of it. */
  worker?: () => Promise<{ activities: Partial<ActivityDeps>; close(): Promise<void> }>;
}

const approverKey = generateKeyPairSync('ed25519');

/** A webhook receiver on loopback that takes every delivery. */
async function webhookReceiver(): Promise<{ activities: Partial<ActivityDeps>; close(): Promise<void> }> {
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(204).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    activities: {
      approverKeys: {
        alice: rawPublicKey(
          approverKey.publicKey.export({ format: 'pem', type: 'spki' }).toString(),
          'alice',
        ),
      },
      webhooks: [
        {
          url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
          events: ['approval_requested', 'run_finished', 'run_failed', 'conversation_ended'],
          secret: 'a-secret-for-recording',
        },
      ],
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Approvers of the approval-policy scenario: two leads and one on call. */
const policyKeys = Object.fromEntries(
  ['alice', 'bob', 'dave'].map((name) => [name, generateKeyPairSync('ed25519')]),
);

/** Writes need both leads; after 1 s dave may decide too; after 4 s the policy rejects. */
async function policyWorker(): Promise<{ activities: Partial<ActivityDeps>; close(): Promise<void> }> {
  const receiver = await webhookReceiver();
  return {
    activities: {
      approverKeys: Object.fromEntries(
        Object.entries(policyKeys).map(([name, pair]) => [
          name,
          rawPublicKey(pair.publicKey.export({ format: 'pem', type: 'spki' }).toString(), name),
        ]),
      ),
      approvalPolicy: ApprovalPolicySchema.parse({
        groups: { leads: ['alice', 'bob'], oncall: ['dave'] },
        rules: [
          {
            name: 'writes',
            match: { tools: ['write'] },
            approvers: 'leads',
            quorum: 2,
            escalate: { afterMs: 1_000, to: 'oncall' },
            expire: { afterMs: 4_000, reason: 'nobody approved the write in time' },
          },
        ],
      }),
      webhooks: [
        {
          ...receiver.activities.webhooks![0]!,
          events: ['approval_requested', 'approval_escalated', 'approval_expired'],
        },
      ],
    },
    close: receiver.close,
  };
}

/**
 * The agent's daily token budget (20 tokens, counted by a clock two seconds before a midnight): run 1
 * is held at its third model call and goes on when the day turns; run 2 spends the new day and is
 * held again, then stopped by a reject.
 */
function dailyBudgetScenario(): Scenario {
  const midnight = Date.parse('2030-01-02T00:00:00Z');
  let now = midnight - 3_000;
  const list = (id: string) => ({ toolCalls: [{ id, name: 'list_directory', arguments: {} }] });
  return {
    name: 'daily-budget',
    options: { agentId: 'history-agent' },
    worker: async () => ({
      activities: { dailyTokenBudgets: { default: 20, agents: {} }, dailyTokenClock: () => now },
      close: async () => {},
    }),
    model: [
      list('call_daily_1'),
      list('call_daily_2'),
      { text: 'Listed on the next day.' },
      list('call_daily_3'),
    ],
    drive: async ({ send, handle, pending, runFinished }) => {
      await send('List twice');
      await pending('budget-1');
      now = midnight + 1_000;
      await runFinished(1);
      await send('Once more');
      await pending('budget-2');
      await handle.executeUpdate(approveUpdate, {
        args: [decision('budget-2', 'reject_once', 'alice', 'enough for today')],
      });
      await runFinished(2);
    },
  };
}

/** How long the first worker's conversations wait for it on its sticky queue, queries too. */
const DEAD_WORKER_STICKY_MS = 5_000;
/** How long before the message the query sets out: the message must find it already on its way. */
const QUERY_HEAD_START_MS = 2_000;

/**
 * An abort accepted against the state a query showed early. The worker that has the idle
 * conversation cached is killed; a query sent then waits for it on its sticky queue while the next
 * message arrives, then goes to the recording's worker, which answers it from the whole history:
 * the message taken and its run begun, though no workflow task has taken the message yet (its task
 * still waits for the dead worker). The abort sent on that answer is accepted by the task that takes
 * the message, after the run's start; replaying that task, the SDK runs the update before the
 * run begins, so the abort is held until a run is in progress (src/workflows/held-on-replay.ts).
 */
function abortAcceptedWithItsRunScenario(): Scenario {
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  return {
    name: 'abort-accepted-with-its-run',
    model: [{ text: 'Ready.' }, { text: 'Going on after the abort.' }],
    prologue: async ({ say, startWorkerProcess }) => {
      const first = await startWorkerProcess({
        AGENT_STICKY_QUEUE_TIMEOUT_MS: String(DEAD_WORKER_STICKY_MS),
      });
      await say('Get ready');
      // Killed at once: the server counts it as polling its sticky queue for 10 s after its last poll.
      await killWorkerProcess(first);
    },
    drive: async ({ handle, client, id, runFinished, say }) => {
      // Plain query and signal: AgentClient.send would query first, and that query would wait instead.
      const early = handle.query(statusQuery);
      await pause(QUERY_HEAD_START_MS);
      await handle.signal(userMessageSignal, { text: 'Start counting', messageId: 'message-aborted' });
      const shown = await early;
      if (shown.status !== 'running' || shown.runCount !== 2) {
        throw new Error(`the query did not show run 2 early (${JSON.stringify(shown)}): record again`);
      }
      await handle.executeUpdate(abortUpdate, { args: [{ reason: 'not now', by: 'ops' }] });
      await runFinished(2);
      await assertAcceptedByTheTaskThatTookTheMessage(client, id);
      await say('Go on');
    },
  };
}

/** The abort's acceptance is the first workflow task completed after the message: the early state's. */
async function assertAcceptedByTheTaskThatTookTheMessage(client: Client, id: string): Promise<void> {
  const events = (await client.workflow.getHandle(id).fetchHistory()).events ?? [];
  const accepted = events.findIndex((event) => event.workflowExecutionUpdateAcceptedEventAttributes);
  const messages = events.flatMap((event, index) =>
    index < accepted && event.workflowExecutionSignaledEventAttributes?.signalName === 'userMessage'
      ? [index]
      : [],
  );
  const message = messages.at(-1) ?? -1;
  const tasksBetween = events
    .slice(message, accepted)
    .filter((event) => event.workflowTaskCompletedEventAttributes).length;
  if (accepted < 0 || message < 0 || tasksBetween !== 1) {
    throw new Error(
      `the abort was not accepted by the workflow task that took the message (${tasksBetween} tasks between): record again`,
    );
  }
}

const steerInput = (text: string): [UserMessageInput] => [{ text, messageId: `steer-${text.length}` }];
const decision = (toolCallId: string, kind: ApprovalDecision['decision'], by: string, reason?: string) => ({
  toolCallId,
  decision: kind,
  by,
  ...(reason ? { reason } : {}),
});
/** A 1x1 PNG. */
const ONE_PIXEL_PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
const LONG_COMMAND = 'for i in $(seq 1 300); do echo line $i; sleep 0.1; done';

const SCENARIOS: Scenario[] = [
  {
    name: 'signed-approval-webhooks',
    worker: webhookReceiver,
    model: [
      {
        toolCalls: [
          { id: 'call_write_signed', name: 'write', arguments: { path: 'signed.txt', content: 's' } },
        ],
      },
      { text: 'Wrote signed.txt.' },
    ],
    drive: async ({ send, handle, pending, runFinished }) => {
      await send('Write signed.txt');
      await pending('call_write_signed');
      const [call] = await handle.query(pendingApprovalsQuery);
      await handle.executeUpdate(approveUpdate, {
        args: [
          signDecision(
            handle.workflowId,
            {
              ...decision('call_write_signed', 'allow_once', 'alice'),
              argumentsSha256: call!.argumentsSha256,
            },
            approverKey.privateKey,
          ),
        ],
      });
      await runFinished(1);
    },
  },
  {
    // A quorum of two leads, an escalation to oncall decided there, and an expiry.
    name: 'approval-policy',
    worker: policyWorker,
    model: ['quorum', 'escalated', 'expired'].flatMap((kind) => [
      {
        toolCalls: [{ id: `call_${kind}`, name: 'write', arguments: { path: `${kind}.txt`, content: kind } }],
      },
      { text: `Done with ${kind}.` },
    ]),
    drive: async ({ send, handle, pending, runFinished }) => {
      const allow = async (toolCallId: string, by: string) => {
        const call = (await handle.query(pendingApprovalsQuery)).find(
          (item) => item.toolCallId === toolCallId,
        );
        await handle.executeUpdate(approveUpdate, {
          args: [
            signDecision(
              handle.workflowId,
              { ...decision(toolCallId, 'allow_once', by), argumentsSha256: call!.argumentsSha256 },
              policyKeys[by]!.privateKey,
            ),
          ],
        });
      };
      await send('Write quorum.txt');
      await pending('call_quorum');
      await allow('call_quorum', 'alice');
      await allow('call_quorum', 'bob');
      await runFinished(1);
      await send('Write escalated.txt');
      await pending('call_escalated');
      await waitFor(async () => {
        const [call] = await handle.query(pendingApprovalsQuery);
        return call?.policy?.escalated ? true : undefined;
      }, 'the escalation');
      await allow('call_escalated', 'dave');
      await runFinished(2);
      await send('Write expired.txt');
      await runFinished(3);
    },
  },
  {
    name: 'tool-fan-out',
    model: [
      {
        text: 'Looking.',
        toolCalls: [
          { id: 'call_list', name: 'list_directory', arguments: {} },
          { id: 'call_read', name: 'read', arguments: { path: 'notes.txt' } },
          { id: 'call_unknown', name: 'teleport', arguments: {} },
          { id: 'call_bad_json', name: 'read', arguments: '{"path":' },
        ],
      },
      { text: 'There is one file, notes.txt.' },
      { text: 'You are welcome.' },
    ],
    drive: async ({ say }) => {
      await say('Look around');
      await say('Thanks');
    },
  },
  {
    // Short read-only tools as local activities (patched 'local-read-tools'), beside a tool
    // activity in the same fan-out.
    name: 'local-tools',
    model: [
      {
        toolCalls: [
          { id: 'call_read', name: 'read', arguments: { path: 'notes.txt' } },
          { id: 'call_list', name: 'list_directory', arguments: {} },
          { id: 'call_grep', name: 'grep', arguments: { pattern: 'line', path: 'notes.txt' } },
        ],
      },
      { text: 'notes.txt has two lines.' },
    ],
    drive: async ({ say }) => {
      await say('What is in notes.txt?');
    },
  },
  {
    // A local tool that outlasts its attempt in the workflow task (patched 'local-tool-attempt'):
    // cut off, handed over after a timer, run as an activity, which a steer stops.
    name: 'local-tool-cut-off',
    options: { approval: { mode: 'auto' } },
    model: [
      { toolCalls: [{ id: 'call_local_tick', name: 'local_ticker', arguments: { ticks: 600 } }] },
      { text: 'Stopped counting.' },
    ],
    worker: async () => ({
      activities: { tools: new ToolRegistry([...builtinTools(), localTickerTool]) },
      close: async () => {},
    }),
    drive: async ({ send, handle, runFinished }) => {
      await send('Count to 600');
      await waitForHeartbeat(handle, (details) => /tick [3-9]/.test(JSON.stringify(details)));
      await handle.executeUpdate(steerUpdate, { args: steerInput('Enough') });
      await runFinished(1);
    },
  },
  {
    name: 'max-tool-iterations',
    options: { maxToolIterations: 2 },
    model: [
      { toolCalls: [{ id: 'call_loop_1', name: 'list_directory', arguments: {} }] },
      { toolCalls: [{ id: 'call_loop_2', name: 'list_directory', arguments: {} }] },
    ],
    drive: ({ say }) => say('Loop'),
  },
  {
    name: 'model-error',
    model: [{ status: 401, error: 'invalid api key' }, { text: 'Hello.' }],
    drive: async ({ say }) => {
      await say('Hello');
      await say('Hello again');
    },
  },
  {
    // allow_always by update, a later call allowed by that standing decision, a rejection by signal.
    name: 'approval',
    options: { approval: { approvers: ['alice', 'bob'] } },
    model: [
      {
        toolCalls: [
          { id: 'call_write_a', name: 'write', arguments: { path: 'a.txt', content: 'a' } },
          { id: 'call_read_notes', name: 'read', arguments: { path: 'notes.txt' } },
        ],
      },
      { text: 'Wrote a.txt.' },
      { toolCalls: [{ id: 'call_write_b', name: 'write', arguments: { path: 'b.txt', content: 'b' } }] },
      { text: 'Wrote b.txt.' },
      { toolCalls: [{ id: 'call_exec_ls', name: 'exec', arguments: { command: 'ls' } }] },
      { text: 'I will not run it.' },
    ],
    drive: async ({ send, handle, pending, runFinished }) => {
      await send('Write a');
      await pending('call_write_a');
      await handle.executeUpdate(approveUpdate, {
        args: [decision('call_write_a', 'allow_always', 'alice')],
      });
      await runFinished(1);
      await send('Write b');
      await runFinished(2);
      await send('List files');
      await pending('call_exec_ls');
      await handle.signal(approveSignal, decision('call_exec_ls', 'reject_once', 'bob', 'not today'));
      await runFinished(3);
    },
  },
  {
    name: 'approval-timeout',
    options: { approval: { timeoutMs: 500 } },
    model: [
      { toolCalls: [{ id: 'call_exec_late', name: 'exec', arguments: { command: 'ls' } }] },
      { text: 'Nobody approved.' },
    ],
    drive: ({ say }) => say('List files'),
  },
  {
    name: 'steer',
    options: { approval: { mode: 'auto' } },
    model: [
      { toolCalls: [{ id: 'call_exec_long', name: 'exec', arguments: { command: LONG_COMMAND } }] },
      { text: 'Stopped as asked.' },
    ],
    drive: async ({ send, handle, runFinished }) => {
      await send('Count slowly');
      await waitForHeartbeat(handle, (details) => /line 3/.test(JSON.stringify(details)));
      await handle.executeUpdate(steerUpdate, { args: steerInput('That is enough') });
      await runFinished(1);
    },
  },
  {
    // A message delivered three times (twice at once, once after its run) is taken once; the next
    // message runs as the second run.
    name: 'message-once',
    model: [{ text: 'Taken once.' }, { text: 'And the next.' }],
    drive: async ({ agent, id, handle, runFinished, say }) => {
      const once: UserMessageInput = { text: 'Say it once', messageId: 'history-message-once' };
      await agent.start(id);
      await Promise.all([handle.signal(userMessageSignal, once), handle.signal(userMessageSignal, once)]);
      await runFinished(1);
      await handle.signal(userMessageSignal, once);
      await say('And now something else');
    },
  },
  {
    // Pinned to build-1, a run waits for an approval while build-2 becomes current: it ends on
    // build-1, then the conversation continues as new onto build-2, where the next run answers.
    name: 'deploy-new-build',
    versioned: true,
    recordFirstRun: true,
    options: { approval: { tools: { read: 'always' } } },
    model: [
      { toolCalls: [{ id: 'call_read_deploy', name: 'read', arguments: { path: 'notes.txt' } }] },
      { text: 'Read it on the first build.' },
      { text: 'Answered on the second build.' },
    ],
    drive: async ({ send, handle, pending, runFinished, say, deployNewBuild }) => {
      await send('Read notes.txt');
      await pending('call_read_deploy');
      await deployNewBuild();
      await handle.executeUpdate(approveUpdate, {
        args: [decision('call_read_deploy', 'allow_once', 'alice')],
      });
      await runFinished(1);
      await say('And again');
    },
  },
  {
    // Continues as new after every run or two; the last run starts from carried state.
    name: 'continue-as-new',
    options: { maxHistoryEvents: 50, approval: { mode: 'auto' } },
    recordFirstRun: true,
    model: Array.from({ length: 5 }, (_, turn) => [
      { toolCalls: [{ id: `call_can_${turn}`, name: 'list_directory', arguments: {} }] },
      { text: `Turn ${turn} done.` },
    ]).flat(),
    drive: async ({ say }) => {
      for (let turn = 0; turn < 5; turn++) await say(`Turn ${turn}`);
    },
  },
  {
    // One run of many turns that continues as new between two of its turns and resumes in the next execution.
    name: 'continue-as-new-mid-run',
    options: { maxHistoryEvents: 50, maxToolIterations: 20, approval: { mode: 'auto' } },
    recordFirstRun: true,
    model: [
      ...Array.from({ length: 12 }, (_, turn) => ({
        toolCalls: [{ id: `call_mid_${turn}`, name: 'list_directory', arguments: {} }],
      })),
      { text: 'Looked twelve times.' },
    ],
    drive: ({ say }) => say('Look around, many times'),
  },
  {
    // No system prompt set: the worker writes its default one with the workspace's AGENTS.md
    // (patched 'default-system-prompt'), and the second run of the day reuses it.
    name: 'default-system-prompt',
    model: [
      { toolCalls: [{ id: 'call_prompt_read', name: 'read', arguments: { path: 'notes.txt' } }] },
      { text: 'Your notes say to remember the milk.' },
      { text: 'Nothing else.' },
    ],
    drive: async ({ say }) => {
      await say('What do my notes say?');
      await say('Anything else?');
    },
  },
  {
    // Keeps what it spent in its memo as each run finishes, and hands it to the next execution.
    name: 'spent-memo',
    options: { maxHistoryEvents: 50, approval: { mode: 'auto' } },
    recordFirstRun: true,
    model: Array.from({ length: 4 }, (_, turn) => [
      { toolCalls: [{ id: `call_spent_${turn}`, name: 'list_directory', arguments: {} }] },
      { text: `Run ${turn} done.` },
    ]).flat(),
    drive: async ({ say }) => {
      for (let turn = 0; turn < 4; turn++) await say(`Run ${turn}`);
    },
  },
  {
    // Compacts on its own past the budget, then once more on the `compact` update.
    name: 'compaction',
    options: { compaction: { maxTokens: 1_000, keepTokens: 400 } },
    model: Array.from(
      { length: 12 },
      () => (request: ChatRequest) =>
        request.messages[0]?.content === SUMMARY_SYSTEM_PROMPT
          ? { text: 'The user asked for long answers and got them.' }
          : { text: `Answer ${request.messages.length}: ${'long words '.repeat(200)}` },
    ),
    drive: async ({ say, handle }) => {
      for (let turn = 1; turn <= 4; turn++) await say(`Question ${turn}`);
      await handle.executeUpdate(compactUpdate);
      await say('One more');
    },
  },
  {
    // The parent's history: a sub-agent started as a child workflow, its answer the tool result.
    name: 'sub-agent',
    model: [
      { toolCalls: [{ id: 'call_spawn', name: 'sessions_spawn', arguments: { task: 'List the files' } }] },
      { toolCalls: [{ id: 'call_child_list', name: 'list_directory', arguments: {} }] },
      { text: 'There is notes.txt.' },
      { text: 'The sub-agent found notes.txt.' },
    ],
    drive: ({ say }) => say('Delegate a look around'),
  },
  {
    // Recorded before sub-agents drew from their parent's budget: a parent with a budget, a sub-agent
    // started with none, its tokens counted when it finished.
    name: 'sub-agent-budget-before-share',
    options: { budget: { tokens: 100 } },
    model: [
      { toolCalls: [{ id: 'call_spawn', name: 'sessions_spawn', arguments: { task: 'List the files' } }] },
      { toolCalls: [{ id: 'call_child_list', name: 'list_directory', arguments: {} }] },
      { text: 'There is notes.txt.' },
      { text: 'The sub-agent found notes.txt.' },
    ],
    drive: ({ say }) => say('Delegate a look around'),
  },
  {
    // A sub-agent drawing from its parent's budget: 45 of the 60 tokens and 3 of the 4 tool calls the
    // parent has left after its spawn; it stops at its share, and the parent pauses at its own limit.
    name: 'sub-agent-budget',
    options: { budget: { tokens: 60, toolCalls: 4 } },
    model: [
      { toolCalls: [{ id: 'call_spawn', name: 'sessions_spawn', arguments: { task: 'Look around' } }] },
      ...[1, 2, 3].map((n) => ({
        toolCalls: [{ id: `call_child_list_${n}`, name: 'list_directory', arguments: {} }],
      })),
      { text: 'The sub-agent ran out of its share.' },
    ],
    drive: async ({ send, handle, pending, runFinished }) => {
      await send('Delegate a look around');
      await pending('budget-1');
      await handle.executeUpdate(approveUpdate, {
        args: [{ ...decision('budget-1', 'allow_once', 'alice'), raise: { tokens: 15 } }],
      });
      await runFinished(1);
    },
  },
  {
    // Budget pauses: tool calls raised by update, tokens raised by signal with no amount, a stop, a run after it.
    name: 'budget',
    options: { budget: { tokens: 30, toolCalls: 2 } },
    model: [
      { toolCalls: [{ id: 'call_budget_1', name: 'list_directory', arguments: {} }] },
      {
        toolCalls: [
          { id: 'call_budget_2', name: 'list_directory', arguments: {} },
          { id: 'call_budget_3', name: 'read', arguments: { path: 'notes.txt' } },
        ],
      },
      { text: 'Listed and read.' },
      { toolCalls: [{ id: 'call_budget_4', name: 'list_directory', arguments: {} }] },
      { text: 'Going on after the stop.' },
    ],
    drive: async ({ send, handle, pending, runFinished }) => {
      await send('List and read');
      await pending('budget-1');
      await handle.executeUpdate(approveUpdate, {
        args: [{ ...decision('budget-1', 'allow_once', 'alice'), raise: { toolCalls: 1 } }],
      });
      await pending('budget-2');
      await handle.signal(approveSignal, decision('budget-2', 'allow_once', 'bob'));
      await runFinished(1);
      await send('Once more');
      await pending('budget-3');
      await handle.executeUpdate(approveUpdate, {
        args: [decision('budget-3', 'reject_once', 'alice', 'enough')],
      });
      await runFinished(2);
      // The next run's model call carries the stopped call's blocked result, which history shows.
      await send('Go on');
      await pending('budget-4');
      await handle.executeUpdate(approveUpdate, {
        args: [{ ...decision('budget-4', 'allow_once', 'alice'), raise: { tokens: 15 } }],
      });
      await runFinished(3);
    },
  },
  dailyBudgetScenario(),
  {
    name: 'abort',
    options: { approval: { mode: 'auto' } },
    model: [
      { toolCalls: [{ id: 'call_exec_abort', name: 'exec', arguments: { command: LONG_COMMAND } }] },
      { text: 'Starting over.' },
    ],
    drive: async ({ send, say, handle, runFinished }) => {
      await send('Count slowly');
      await waitForHeartbeat(handle, (details) => /line 3/.test(JSON.stringify(details)));
      await handle.executeUpdate(abortUpdate, { args: [{ reason: 'too slow', by: 'ops' }] });
      await runFinished(1);
      await say('Start over');
    },
  },
  abortAcceptedWithItsRunScenario(),
  {
    // The approval mode changed by update between two runs: the second exec runs without asking.
    name: 'approval-mode',
    model: [
      { toolCalls: [{ id: 'call_mode_ask', name: 'exec', arguments: { command: 'ls' } }] },
      { text: 'Listed once someone allowed it.' },
      { toolCalls: [{ id: 'call_mode_auto', name: 'exec', arguments: { command: 'ls' } }] },
      { text: 'Listed without asking.' },
    ],
    drive: async ({ send, handle, pending, runFinished, agent, id }) => {
      await send('List with approval');
      await pending('call_mode_ask');
      await handle.executeUpdate(approveUpdate, { args: [decision('call_mode_ask', 'allow_once', 'alice')] });
      await runFinished(1);
      await agent.setApprovalMode(id, { mode: 'auto' });
      await send('List again');
      await runFinished(2);
    },
  },
  {
    // A message with an image: the model call's transcript carries it.
    name: 'images',
    model: [{ text: 'A single pixel.' }],
    drive: async ({ agent, id, runFinished }) => {
      await agent.send(id, 'What is in this picture?', {
        images: [{ type: 'image', data: ONE_PIXEL_PNG, mimeType: 'image/png' }],
      });
      await runFinished(1);
    },
  },
  {
    // A worker that found the search attributes registered: the conversation upserts them as it goes.
    name: 'search-attributes',
    options: { agentId: 'recorder', approval: { mode: 'auto' } },
    model: [
      { toolCalls: [{ id: 'call_sa_list', name: 'list_directory', arguments: {} }] },
      { text: 'Listed.' },
      { text: 'Second run.' },
    ],
    worker: async () => ({ activities: { searchAttributes: true }, close: async () => {} }),
    drive: async ({ say }) => {
      await say('List files');
      await say('Once more');
    },
  },
  {
    // A fork of another conversation at run 1, checked by the worker against that one's history.
    name: 'fork',
    model: [{ text: 'One.' }, { text: 'Two.' }, { text: 'The fork answers.' }],
    drive: async ({ agent, id, client, runFinished }) => {
      const original = `${id}-original`;
      for (const [run, text] of ['Turn 1', 'Turn 2'].entries()) {
        await agent.send(original, text);
        await waitForEvent(
          client.workflow.getHandle(original),
          'run_finished',
          (event) => event.run === run + 1,
        );
      }
      const executions = await fetchConversationHistories(client, original);
      await startFork(agent, id, forkStart(original, executions, 1, defaultPayloadConverter));
      await agent.send(id, 'Turn 2 of the fork');
      await runFinished(2);
    },
  },
  {
    // A rerun with recorded tools: one call served from the recording, one answered "not recorded".
    name: 'rerun',
    options: {
      approval: { mode: 'auto' },
      rerun: {
        of: 'history-rerun-original',
        tools: 'recorded',
        recorded: [
          {
            run: 1,
            toolName: 'read',
            arguments: '{"path":"notes.txt"}',
            content: [{ type: 'text', text: 'the recorded milk' }],
            isError: false,
          },
        ],
      },
    },
    model: [
      {
        toolCalls: [
          { id: 'call_rerun_read', name: 'read', arguments: { path: 'notes.txt' } },
          { id: 'call_rerun_list', name: 'list_directory', arguments: {} },
        ],
      },
      { text: 'Read from the recording.' },
    ],
    drive: ({ say }) => say('Read the notes'),
  },
];

const historyFile = (name: string) => path.join(__dirname, '..', 'histories', `${name}.json`);

async function main(names: string[]) {
  const unknown = names.filter((name) => !SCENARIOS.some((scenario) => scenario.name === name));
  if (unknown.length) throw new Error(`no such scenario: ${unknown.join(', ')}`);
  const chosen = names.length
    ? SCENARIOS.filter((scenario) => names.includes(scenario.name))
    : SCENARIOS.filter((scenario) => !existsSync(historyFile(scenario.name)));
  if (chosen.length === 0) {
    console.log('every scenario has a recorded history; name the ones to record again');
    return;
  }
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const server = await startDevServer({ port: await freePort(), log: console.log });
  const code = await bundleAgentWorkflows();
  const workspace = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-record-'));
  // Bundled from source, never a stale dist/ bundle.
  const bundlePath = path.join(workspace, '..', `durable-agent-record-bundle-${process.pid}.js`);
  await writeFile(bundlePath, code);
  await writeFile(path.join(workspace, 'notes.txt'), 'remember the milk\n');
  await writeFile(path.join(workspace, 'AGENTS.md'), 'Answer in one sentence.\n');
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection });
  try {
    for (const scenario of chosen) {
      const file = historyFile(scenario.name);
      const model = await startScriptedModelServer(scenario.model);
      const nativeConnection = await NativeConnection.connect({ address: server.address });
      const taskQueue = `record-${scenario.name}`;
      const extra = await scenario.worker?.();
      const deploymentName = `record-${scenario.name}`;
      const deployments = new WorkerDeployments(connection.workflowService, 'default');
      const startWorker = (buildId?: string) =>
        createAgentWorker({
          connection: nativeConnection,
          namespace: 'default',
          taskQueue,
          workflowBundlePath: bundlePath,
          activities: {
            openai: new OpenAI({ baseURL: model.baseUrl, apiKey: 'record', maxRetries: 0 }),
            defaultModel: 'scripted-model',
            tools: new ToolRegistry(builtinTools()),
            defaultWorkspace: workspace,
            ...extra?.activities,
          },
          ...(buildId ? { deployment: { deploymentName, buildId } } : {}),
        });
      /** Once a worker of the build has polled, Temporal knows it and may route to it. */
      const makeCurrent = (buildId: string) =>
        waitFor(
          () =>
            deployments.setCurrent(deploymentName, buildId).then(
              () => true,
              () => undefined,
            ),
          `${buildId} to become current`,
        );
      const worker = await startWorker(scenario.versioned ? 'build-1' : undefined);
      let secondBuild: { worker: AgentWorker; running: Promise<void> } | undefined;
      const agent = new AgentClient(client, taskQueue);
      const id = `history-${scenario.name}`;
      const handle = client.workflow.getHandle(id);
      let runs = 0;
      const runFinished = async (run: number) => {
        await waitForEvent(handle, 'run_finished', (event) => event.run === run);
      };
      const send = async (text: string) => {
        await agent.send(id, text, { options: scenario.options });
      };
      const say = async (text: string) => {
        await send(text);
        await runFinished(++runs);
      };
      const workerProcesses: ChildProcess[] = [];
      await scenario.prologue?.({
        agent,
        id,
        say,
        startWorkerProcess: async (env = {}) => {
          const child = await spawnWorkerProcess({
            TEST_TEMPORAL_ADDRESS: server.address,
            TEST_WORKFLOW_BUNDLE: bundlePath,
            TASK_QUEUE: taskQueue,
            OPENAI_BASE_URL: model.baseUrl,
            WORKSPACE: workspace,
            MARKER_DIR: workspace,
            ...env,
          });
          workerProcesses.push(child);
          return child;
        },
      });
      await worker.runUntil(async () => {
        if (scenario.versioned) await makeCurrent('build-1');
        await scenario.drive({
          agent,
          id,
          client,
          handle,
          send,
          say,
          runFinished: async (run) => {
            runs = run;
            await runFinished(run);
          },
          deployNewBuild: async () => {
            const second = await startWorker('build-2');
            secondBuild = { worker: second, running: second.run() };
            await makeCurrent('build-2');
          },
          pending: async (toolCallId) => {
            await waitFor(async () => {
              const pending = await handle.query(pendingApprovalsQuery);
              return pending.some((approval) => approval.toolCallId === toolCallId) || undefined;
            }, `approval of ${toolCallId}`);
          },
        });
        await agent.end(id);
        await handle.result();
        const write = async (
          target: string,
          history: Awaited<ReturnType<WorkflowHandle['fetchHistory']>>,
        ) => {
          await writeFile(target, `${JSON.stringify(JSON.parse(historyToJSON(history)), null, 1)}\n`);
          console.log(`recorded ${target}`);
        };
        await write(file, await handle.fetchHistory());
        if (scenario.recordFirstRun) {
          const runs = [];
          for await (const run of client.workflow.list({ query: `WorkflowId = '${id}'` })) runs.push(run);
          const oldest = runs.sort((a, b) => a.startTime.getTime() - b.startTime.getTime())[0]!;
          const first = client.workflow.getHandle(id, oldest.runId);
          await write(historyFile(`${scenario.name}-first-run`), await first.fetchHistory());
        }
      });
      secondBuild?.worker.shutdown();
      await secondBuild?.running;
      for (const child of workerProcesses) await killWorkerProcess(child);
      await nativeConnection.close();
      await model.close();
      await extra?.close();
    }
  } finally {
    await connection.close();
    await server.stop();
  }
}

main(process.argv.slice(2)).catch((error) => {
  console.error(error);
  process.exit(1);
});
