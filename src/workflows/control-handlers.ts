import { setHandler } from '@temporalio/workflow';
import type { z } from 'zod';
import { type ApprovalDecision, ApprovalDecisionSchema } from '../shared/approvals';
import {
  AbortInputSchema,
  type SteerReceipt,
  type UserMessageInput,
  UserMessageInputSchema,
  abortSignal,
  abortUpdate,
  approveSignal,
  approveUpdate,
  steerSignal,
  steerUpdate,
} from '../shared/conversation-api';
import type { UserMessage } from '../shared/messages';
import type { ApprovalBook } from './approval-book';
import type { RunControl } from './run-control';
import { workflowTime } from './workflow-time';

export interface ControlTarget {
  approvals: ApprovalBook;
  /** The run in progress, if any. */
  currentRun(): RunControl | undefined;
  /** Queues a message for the next run. */
  enqueue(message: UserMessage): void;
  ending(): boolean;
  /** Records why a signal was ignored: a signal, unlike an update, cannot be refused. */
  ignored(what: string, reason: string): void;
}

export function userMessageOf(input: UserMessageInput): UserMessage {
  return {
    role: 'user',
    content: input.text,
    messageId: input.messageId,
    ...(input.sender !== undefined ? { sender: input.sender } : {}),
    timestamp: workflowTime(),
  };
}

/**
 * Steer, abort and approve, each as a signal (for senders that only have the Temporal CLI) and as an
 * update whose validator refuses what the signal would ignore, so a refused request never touches
 * state or history.
 */
export function installControlHandlers(target: ControlTarget): void {
  const checkSteer = (input: unknown): UserMessageInput => {
    if (target.ending()) throw new Error('the conversation is ending');
    return parse(UserMessageInputSchema, input);
  };
  const steer = (input: UserMessageInput): SteerReceipt => {
    const message = userMessageOf(input);
    const run = target.currentRun();
    if (run) run.steer(message);
    else target.enqueue(message);
    return { messageId: message.messageId, interrupting: run !== undefined };
  };
  setHandler(steerSignal, (input) => signalled('steer', () => steer(checkSteer(input))));
  setHandler(steerUpdate, steer, { validator: (input) => void checkSteer(input) });

  const checkAbort = (input: unknown) => {
    const run = target.currentRun();
    if (!run) throw new Error('no run is in progress');
    return { run, reason: parse(AbortInputSchema, input ?? {}) };
  };
  const abort = (input: unknown) => {
    const { run, reason } = checkAbort(input);
    run.abort(reason);
    return { run: run.run };
  };
  setHandler(abortSignal, (input) => signalled('abort', () => abort(input)));
  setHandler(abortUpdate, abort, { validator: (input) => void checkAbort(input) });

  const checkApproval = (input: unknown): ApprovalDecision => {
    const decision = parse(ApprovalDecisionSchema, input);
    target.approvals.check(decision);
    return decision;
  };
  const approve = (input: unknown) => target.approvals.apply(checkApproval(input));
  setHandler(approveSignal, (input) => signalled('approve', () => approve(input)));
  setHandler(approveUpdate, approve, { validator: (input) => void checkApproval(input) });

  function signalled(what: string, handle: () => unknown): void {
    try {
      handle();
    } catch (error) {
      target.ignored(what, (error as Error).message);
    }
  }
}

function parse<T>(schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new Error(parsed.error.message);
  return parsed.data;
}
