import { randomUUID } from 'node:crypto';
import type { CallToolResult, CreateTaskResult } from '@modelcontextprotocol/sdk/types.js';

import type { z } from 'zod';
import type { Sent } from '../client/agent-client';
import { taskOf } from './conversation-tasks';
import { callKey, keyedIds } from './message-keys';
import type { SendMessageInput, StartTaskInput } from './mcp-tools';
import { type RequestContext, followForRequest } from './request-context';
import { type StatusReport, reportOfStanding, statusResult } from './run-report';
import { runStanding, standingOfEnd } from './run-standing';
import { type TaskRef, taskIdOf } from './task-ids';

/** How the call that sends a message wants its answer: as a task, or within a wait (0: at once). */
export interface AnswerMode {
  task: boolean;
  waitSeconds: number;
}

/** `start_task`: a new conversation for the agent, and the task as its first message. */
export async function startTask(
  context: RequestContext,
  args: z.infer<typeof StartTaskInput>,
  mode: AnswerMode,
): Promise<CallToolResult | CreateTaskResult> {
  const { agent, caller } = context.deps;
  const key = callKey(args.request_key, context.deps.session(), context.extra.requestId);
  const keyed =
    key !== undefined
      ? keyedIds(caller.name, key, {
          task: args.task,
          agent: args.agent ?? null,
          conversationId: args.conversation_id ?? null,
        })
      : undefined;
  const conversationId =
    args.conversation_id ?? caller.newConversationId(keyed?.conversationSuffix ?? randomUUID());
  caller.authorizeStart(conversationId, args.agent);
  await agent.start(
    conversationId,
    args.agent !== undefined ? { agentId: args.agent } : {},
    keyed ? { requestKey: keyed.startKey } : {},
  );
  const sent = await agent.send(conversationId, args.task, {
    sender: caller.name,
    start: false,
    ...(keyed ? { messageId: keyed.messageId } : {}),
  });
  return answer(context, sent, mode);
}

/** `send_message`: a message to a conversation that exists. */
export async function sendMessage(
  context: RequestContext,
  args: z.infer<typeof SendMessageInput>,
  mode: AnswerMode,
): Promise<CallToolResult | CreateTaskResult> {
  const { agent, caller } = context.deps;
  await caller.authorize('send', args.conversation_id);
  const key = callKey(args.request_key, context.deps.session(), context.extra.requestId);
  const sent = await agent.send(args.conversation_id, args.text, {
    sender: caller.name,
    start: false,
    ...(key !== undefined ? { messageId: keyedIds(caller.name, key, {}).messageId } : {}),
  });
  return answer(context, sent, mode);
}

/**
 * What a call that sent a message answers: the task that follows its run; or, after waiting up to
 * `waitSeconds` (with progress and approvals asked), where the run stands and its answer if it finished.
 */
async function answer(
  context: RequestContext,
  sent: Sent,
  mode: AnswerMode,
): Promise<CallToolResult | CreateTaskResult> {
  const { caller, agent } = context.deps;
  const target = { conversationId: sent.conversationId, messageId: sent.messageId };
  const progressToken = context.extra._meta?.progressToken;
  const retried = sent.duplicate
    ? ' This message had been sent before (the call was retried): it was not sent again.'
    : '';
  if (mode.task) {
    await caller.authorize('status', sent.conversationId);
    const ref: TaskRef = {
      ...target,
      createdAt: Date.now(),
      afterSeq: sent.afterSeq,
      afterRun: sent.afterRun,
      ...(progressToken !== undefined ? { progressToken } : {}),
    };
    return {
      task: taskOf(ref, { state: 'not_taken' }, context),
      _meta: {
        'io.modelcontextprotocol/model-immediate-response': `The agent works on it in conversation ${sent.conversationId} (task ${taskIdOf(ref)}); its answer comes as the task's result.${retried}`,
      },
    };
  }
  if (mode.waitSeconds === 0) {
    if (sent.duplicate && caller.mayEver('status')) {
      const report = reportOfStanding(target, await runStanding(agent, sent));
      return statusResult({ ...report, note: `${report.note}${retried}` });
    }
    return statusResult(sentReport(target, retried));
  }
  await caller.authorize('status', sent.conversationId);
  const end = await followForRequest(context, sent, {
    stop: AbortSignal.timeout(mode.waitSeconds * 1_000),
    ...(progressToken !== undefined ? { progressToken } : {}),
  });
  const standing = end.how === 'stopped' ? await runStanding(agent, sent) : standingOfEnd(end);
  const report = reportOfStanding(target, standing);
  return statusResult({ ...report, note: `${report.note}${retried}` });
}

function sentReport(target: { conversationId: string; messageId: string }, retried: string): StatusReport {
  return {
    ...target,
    status: 'sent',
    pendingApprovals: [],
    note: `Sent: the agent works on it in the background. Read its progress and answer with get_status (conversation_id and message_id above).${retried}`,
  };
}
