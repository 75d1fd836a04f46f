import { Context } from '@temporalio/activity';
import { z } from 'zod';
import type { AgentTool, ToolResult, ToolUpdate } from '../tools/tool';
import { ToolError } from '../tools/tool-error';
import type { ToolDiscovery, ToolSource } from '../tools/tool-source';
import { RemoteTaskTimeoutError } from './follow-remote-task';
import { type RemoteCallProgress, callRemoteAgent } from './remote-call';
import { RemoteAgentClient, RemoteRpcError, RemoteUnreachableError } from './remote-agent-client';
import type { RemoteAgent } from './remote-agents-config';
import { type RemoteCard, fetchRemoteCard } from './remote-card';
import { remoteMessageId } from './remote-message-id';
import type { RemoteTask, RemoteTaskState } from './remote-task';
import { answerOfTask, statusText, textOfParts } from './remote-task-text';

/** What a call's heartbeats carry, so the attempt after a dead worker's follows the same remote task. */
const RecordedProgressSchema = z.object({
  details: z.object({
    a2a: z.object({
      agent: z.string(),
      taskId: z.string().min(1).max(512),
      state: z.string(),
      answered: z.string().max(64).optional(),
    }),
  }),
});
/** How long the remote gets to take a cancel, best effort, once the conversation stopped the call. */
const CANCEL_TIMEOUT_MS = 5_000;
const NO_TEXT = '(the remote agent answered with no text)';

/** A call may outlive a few workers; each attempt follows the task the first one started. */
const MAX_ATTEMPTS = 5;
/** Beyond the remote task's own time: the send, the card, the last poll. */
const CALL_MARGIN_MS = 60_000;

const RemoteCallSchema = z.strictObject({
  message: z.string().min(1).max(100_000).describe('What to ask or tell the remote agent, in words.'),
  taskId: z
    .string()
    .min(1)
    .max(512)
    .optional()
    .describe('To answer a remote task that asked for input: its taskId, from the result that asked.'),
});

/** What a `RemoteA2AToolSource` may be given instead of its defaults (tests give fakes). */
export interface RemoteA2AToolSourceOptions {
  /** How cards are read and calls made; the global `fetch` by default. */
  fetchImpl?: typeof fetch;
  /** How long a card may take to arrive, ms; 10 s by default. */
  cardTimeoutMs?: number;
  /** How long one JSON-RPC call may take, ms; 30 s by default. */
  rpcTimeoutMs?: number;
  /** The details the previous attempt of this call heartbeated; the activity's own by default. */
  previousHeartbeat?: () => unknown;
}

/**
 * Remote A2A agents as tools, one per configured agent, named as configured and described by its
 * card (printable, bounded). A call sends one message whose id comes from the conversation and the
 * call; the remote task's id is heartbeated at once, so when the worker dies the next attempt
 * follows that task (by polling) and never sends again. An agent whose card cannot be read or
 * points elsewhere is a warning; the others stay usable.
 */
export class RemoteA2AToolSource implements ToolSource {
  readonly name = 'a2a';

  constructor(
    private readonly agents: readonly RemoteAgent[],
    private readonly options: RemoteA2AToolSourceOptions = {},
  ) {}

  async discover(): Promise<ToolDiscovery> {
    const found = await Promise.all(
      this.agents.map(async (agent): Promise<{ tool: AgentTool } | { warning: string }> => {
        try {
          const card = await fetchRemoteCard(agent.cardUrl, {
            ...(agent.token ? { token: agent.token } : {}),
            ...(this.options.fetchImpl ? { fetchImpl: this.options.fetchImpl } : {}),
            ...(this.options.cardTimeoutMs ? { timeoutMs: this.options.cardTimeoutMs } : {}),
          });
          return { tool: this.toolOf(agent, card) };
        } catch (error) {
          return { warning: `A2A agent ${agent.name} is not offered: ${(error as Error).message}` };
        }
      }),
    );
    return {
      tools: found.flatMap((entry) => ('tool' in entry ? [entry.tool] : [])),
      warnings: found.flatMap((entry) => ('warning' in entry ? [entry.warning] : [])),
    };
  }

  /** The tool that calls `agent`, described by its card. */
  toolOf(agent: RemoteAgent, card: RemoteCard): AgentTool {
    const client = new RemoteAgentClient(card.endpoint, {
      ...(agent.token ? { token: agent.token } : {}),
      ...(this.options.fetchImpl ? { fetchImpl: this.options.fetchImpl } : {}),
      ...(this.options.rpcTimeoutMs ? { timeoutMs: this.options.rpcTimeoutMs } : {}),
    });
    const skills = card.skills.length ? ` Its skills: ${card.skills.join(', ')}.` : '';
    const previous = this.options.previousHeartbeat ?? (() => Context.current().info.heartbeatDetails);
    return {
      name: agent.name,
      label: card.name,
      description:
        `Asks the remote agent "${card.name}" (over A2A) and returns its answer. ${card.description}${skills}`.trim() +
        ' When it asks for more input, call this tool again with the taskId it gave and your answer.',
      parameters: RemoteCallSchema,
      category: 'other',
      // A call is never sent blindly again: a retried attempt follows the task the first one started.
      idempotent: false,
      risk: 'medium',
      startToCloseTimeoutMs: agent.timeoutMs + CALL_MARGIN_MS,
      retry: { maximumAttempts: MAX_ATTEMPTS },
      verbatimParameters: ['message'],
      execute: async (toolCallId, params, signal, onUpdate, context) => {
        const call = params as z.infer<typeof RemoteCallSchema>;
        const resume = recordedProgress(previous(), agent.name);
        let followed = resume?.taskId;
        // Carried on at once, before anything can stall: this attempt's heartbeats replace the last one's.
        if (resume) onUpdate({ details: { a2a: { agent: agent.name, ...resume } } });
        try {
          const outcome = await callRemoteAgent(
            client,
            {
              messageId: remoteMessageId(context.conversationId, toolCallId),
              text: call.message,
              ...(call.taskId !== undefined ? { taskId: call.taskId } : {}),
            },
            {
              ...(resume ? { resume } : {}),
              deadline: Date.now() + agent.timeoutMs,
              signal,
              onProgress: (progress, task) => {
                followed = progress.taskId;
                onUpdate(updateOf(agent.name, progress, task));
              },
            },
          );
          if (outcome.kind === 'message')
            return { content: [{ type: 'text', text: textOfParts(outcome.parts) || NO_TEXT }] };
          return resultOf(agent.name, outcome.task);
        } catch (error) {
          if (!signal.aborted) throw failureOf(agent.name, error);
          // A steer or an abort ends the remote work too; a timeout or a shutdown leaves it to the next attempt.
          if (followed !== undefined && context.stopRequested?.())
            await client.cancelTask(followed, AbortSignal.timeout(CANCEL_TIMEOUT_MS)).catch(() => undefined);
          throw error;
        }
      },
    };
  }
}

/** Where an earlier attempt of this call stood, if it got as far as knowing its remote task. */
function recordedProgress(details: unknown, agent: string): RemoteCallProgress | undefined {
  const parsed = RecordedProgressSchema.safeParse(details);
  if (!parsed.success || parsed.data.details.a2a.agent !== agent) return undefined;
  const { taskId, state, answered } = parsed.data.details.a2a;
  return { taskId, state: state as RemoteTaskState, ...(answered !== undefined ? { answered } : {}) };
}

function updateOf(agent: string, progress: RemoteCallProgress, task: RemoteTask): ToolUpdate {
  const said = statusText(task, 1_024);
  return {
    content: [
      { type: 'text', text: `remote task ${task.id}: ${task.status.state}${said ? `: ${said}` : ''}` },
    ],
    details: { a2a: { agent, ...progress } },
  };
}

/** A task that ended or waits, as the model reads it. */
function resultOf(agent: string, task: RemoteTask): ToolResult {
  const details = { a2a: { agent, taskId: task.id, state: task.status.state } };
  switch (task.status.state) {
    case 'completed':
      return {
        content: [{ type: 'text', text: answerOfTask(task) || NO_TEXT }],
        details,
      };
    case 'input-required':
      return {
        content: [
          {
            type: 'text',
            text:
              `The remote agent needs more input (its task ${task.id} is input-required). It asks:\n` +
              `${statusText(task) || '(it said nothing more)'}\n` +
              `To answer, call ${agent} again with {"taskId": "${task.id}", "message": "<the answer>"}.`,
          },
        ],
        details,
      };
    case 'auth-required':
      throw new ToolError(
        'PermissionDenied',
        `the remote agent wants authentication this worker does not have (task ${task.id}): ${statusText(task)}`,
        { retryable: false },
      );
    default: {
      const why = statusText(task);
      throw new ToolError(
        'ExecutionFailed',
        `the remote agent's task ${task.id} ended ${task.status.state}${why ? `: ${why}` : ''}`,
        { retryable: false },
      );
    }
  }
}

function failureOf(agent: string, error: unknown): unknown {
  if (error instanceof ToolError) return error;
  if (error instanceof RemoteTaskTimeoutError)
    return new ToolError('Timeout', error.message, { retryable: false });
  if (error instanceof RemoteRpcError)
    return new ToolError(
      'ExecutionFailed',
      `the remote agent ${agent} refused: ${error.message} (${error.code})`,
      {
        retryable: false,
      },
    );
  if (error instanceof RemoteUnreachableError)
    return new ToolError('Unavailable', `the remote agent ${agent} could not be reached: ${error.message}`, {
      retryable: false,
    });
  return error;
}
