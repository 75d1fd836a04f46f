import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import type { AgentClient } from '../client/agent-client';
import type { AbortRunInput, DecideApprovalInput, GetStatusInput } from './mcp-tools';
import { line } from './quoted-text';
import type { RequestContext } from './request-context';
import { type StatusReport, pendingReport, reportOfStanding, statusResult } from './run-report';
import { runStanding } from './run-standing';

/** `get_status`: where a conversation stands, or the run that takes one of its messages. */
export async function getStatus(
  context: RequestContext,
  args: z.infer<typeof GetStatusInput>,
): Promise<CallToolResult> {
  const { agent, caller } = context.deps;
  const conversationId = args.conversation_id;
  await caller.authorize('status', conversationId);
  if (args.message_id !== undefined) {
    const target = { conversationId, messageId: args.message_id };
    return statusResult(
      reportOfStanding(target, await runStanding(agent, { ...target, afterSeq: 0, afterRun: 0 })),
    );
  }
  return statusResult(await conversationReport(agent, conversationId));
}

/** The conversation as a whole: working, waiting or idle, what it waits for, and its latest answer. */
async function conversationReport(agent: AgentClient, conversationId: string): Promise<StatusReport> {
  const execution = await agent.execution(conversationId);
  if (execution.executionStatus !== 'RUNNING') {
    const failure = await agent.failureOf(conversationId).catch(() => undefined);
    return {
      conversationId,
      status: 'ended',
      pendingApprovals: [],
      note: `The conversation has ended (${execution.executionStatus.toLowerCase()}${failure ? `: ${line(failure, 300)}` : ''}); it takes no more messages. Its transcript can still be read.`,
    };
  }
  const [status, pending] = await Promise.all([
    agent.status(conversationId),
    agent.pendingApprovals(conversationId),
  ]);
  const pendingApprovals = pending.map(pendingReport);
  if (pendingApprovals.length > 0)
    return {
      conversationId,
      status: 'waiting_for_approval',
      run: status.runCount,
      pendingApprovals,
      note: 'It waits for a decision: call decide_approval with the conversation_id, the tool_call_id and the arguments_sha256 shown (or ask the person).',
    };
  if (status.status === 'running')
    return {
      conversationId,
      status: 'running',
      run: status.runCount,
      pendingApprovals,
      note: `The agent is working (run ${status.runCount}${status.queuedMessages ? `, ${status.queuedMessages} message(s) queued` : ''}). Ask again later with get_status.`,
    };
  const last = status.lastRun;
  const finished = last
    ? (await agent.events(conversationId, 0)).find(
        (event) => event.type === 'run_finished' && event.run === last.run,
      )
    : undefined;
  return {
    conversationId,
    status: 'idle',
    ...(last ? { run: last.run, outcome: last.outcome } : {}),
    ...(finished?.type === 'run_finished' ? { answer: finished.answer } : {}),
    ...(last?.refusal !== undefined ? { refusal: last.refusal } : {}),
    pendingApprovals,
    note: last
      ? 'The agent is idle: its last run has finished. Send more with send_message.'
      : 'The agent is idle and has not run yet.',
  };
}

/** `decide_approval`: the decision as the caller's, signed as the door signs, for exactly the arguments named. */
export async function decideApproval(
  context: RequestContext,
  args: z.infer<typeof DecideApprovalInput>,
): Promise<CallToolResult> {
  const { agent, caller } = context.deps;
  await caller.authorize('approve', args.conversation_id);
  const receipt = await agent.approve(
    args.conversation_id,
    caller.decision(args.conversation_id, {
      toolCallId: args.tool_call_id,
      decision: args.decision,
      by: caller.name,
      argumentsSha256: args.arguments_sha256,
      ...(args.reason !== undefined ? { reason: args.reason } : {}),
    }),
  );
  const note = receipt.waitingFor
    ? `Counted; the approval policy waits for more: ${line(receipt.waitingFor, 200)}.`
    : `Decided: ${receipt.decision.replace('_', ' ')}. The agent goes on; get_status shows how.`;
  const report = {
    conversationId: args.conversation_id,
    toolCallId: receipt.toolCallId,
    toolName: receipt.toolName,
    decision: receipt.decision,
    ...(receipt.waitingFor ? { waitingFor: receipt.waitingFor } : {}),
    note,
  };
  return {
    content: [
      {
        type: 'text',
        text: `${line(receipt.toolName, 100)} (tool call ${line(receipt.toolCallId, 200)}) in conversation ${args.conversation_id}: ${note}`,
      },
    ],
    structuredContent: report,
  };
}

/** `abort_run`: aborts the run in progress as the caller. */
export async function abortRun(
  context: RequestContext,
  args: z.infer<typeof AbortRunInput>,
): Promise<CallToolResult> {
  const { agent, caller } = context.deps;
  await caller.authorize('abort', args.conversation_id);
  const { run } = await agent.abort(args.conversation_id, {
    by: caller.name,
    ...(args.reason !== undefined ? { reason: args.reason } : {}),
  });
  const note = `Run ${run} is being aborted; the conversation takes new messages.`;
  return {
    content: [{ type: 'text', text: `Conversation ${args.conversation_id}: ${note}` }],
    structuredContent: { conversationId: args.conversation_id, run, note },
  };
}
