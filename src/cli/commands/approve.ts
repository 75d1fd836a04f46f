import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { ApprovalDecision } from '../../shared/approvals';
import { schemaProblems } from '../../shared/schema-problems';
import { readSigningKey, signDecision } from '../../client/sign-decision';
import { decisionFromFlags } from '../approval-choices';
import type { Cleanups } from '../cleanups';
import { connectAgent } from '../connect-agent';
import type { BudgetRaise } from '../../shared/budget';
import {
  conversationIdArg,
  dollarAmount,
  durationArg,
  namedPositionals,
  parseCommandArgs,
  positiveInteger,
} from '../parse-command-args';
import { UsageError } from '../usage-error';
import { currentUserName } from '../user-name';

export interface ApproveArgs {
  conversationId: string;
  decision: ApprovalDecision;
  json: boolean;
  /** An Ed25519 private key (PEM) to sign the decision with, for workers that take signed decisions only. */
  keyFile?: string;
}

export function parseApproveArgs(args: string[], defaultBy: () => string = currentUserName): ApproveArgs {
  const { values, positionals } = parseCommandArgs('approve', {
    args,
    allowPositionals: true,
    options: {
      always: { type: 'boolean', default: false },
      reject: { type: 'boolean', default: false },
      reason: { type: 'string' },
      by: { type: 'string' },
      sha256: { type: 'string' },
      key: { type: 'string' },
      delegation: { type: 'string' },
      'raise-tokens': { type: 'string' },
      'raise-tool-calls': { type: 'string' },
      'raise-deadline': { type: 'string' },
      'raise-usd': { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const raise = raiseFromFlags(values);
  if (raise && values.reject)
    throw new UsageError('approve: --reject stops the run; it cannot go with a --raise-… flag');
  const { ID, TOOL_CALL_ID } = namedPositionals('approve', positionals, ['ID', 'TOOL_CALL_ID'] as const);
  return {
    conversationId: conversationIdArg(ID),
    decision: {
      toolCallId: TOOL_CALL_ID,
      decision: decisionFromFlags(values),
      by: values.by ?? defaultBy(),
      ...(values.reason !== undefined ? { reason: values.reason } : {}),
      // The hash `status` shows: the decision then holds only for exactly those arguments.
      ...(values.sha256 !== undefined ? { argumentsSha256: values.sha256.trim().toLowerCase() } : {}),
      ...(raise ? { raise } : {}),
      ...(values.delegation !== undefined ? { delegation: delegationFromFile(values.delegation) } : {}),
    },
    json: values.json,
    ...(values.key !== undefined ? { keyFile: values.key } : {}),
  };
}

/** A delegation `delegate` printed, from its file: `from`, `expiresAt`, `signature` (its `to` is the decider). */
function delegationFromFile(file: string): NonNullable<ApprovalDecision['delegation']> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new UsageError(`approve: cannot read a delegation from ${file}: ${(error as Error).message}`);
  }
  const delegation = DelegationFileSchema.safeParse(parsed);
  if (!delegation.success)
    throw new UsageError(`approve: ${file} is no delegation: ${schemaProblems(delegation.error)}`);
  const { to: _to, ...rest } = delegation.data;
  return rest;
}

const DelegationFileSchema = z.strictObject({
  from: z.string().min(1),
  to: z.string().min(1).optional(),
  expiresAt: z.number().int().positive(),
  signature: z.string().min(1),
});

/** A run paused at its budget goes on with this much more: tokens, tool calls, time (`30m`) or dollars. */
function raiseFromFlags(values: {
  'raise-tokens'?: string;
  'raise-tool-calls'?: string;
  'raise-deadline'?: string;
  'raise-usd'?: string;
}): BudgetRaise | undefined {
  const tokens = positiveInteger(values['raise-tokens'], '--raise-tokens');
  const toolCalls = positiveInteger(values['raise-tool-calls'], '--raise-tool-calls');
  const deadlineMs =
    values['raise-deadline'] === undefined
      ? undefined
      : durationArg(values['raise-deadline'], '--raise-deadline');
  const usd = dollarAmount(values['raise-usd'], '--raise-usd');
  if (tokens === undefined && toolCalls === undefined && deadlineMs === undefined && usd === undefined)
    return undefined;
  return {
    ...(tokens !== undefined ? { tokens } : {}),
    ...(usd !== undefined ? { usd } : {}),
    ...(toolCalls !== undefined ? { toolCalls } : {}),
    ...(deadlineMs !== undefined ? { deadlineMs } : {}),
  };
}

/** `approve`: decide a pending approval; refused (exit 1, saying why) when the conversation will not take it. */
export async function approveCommand(args: string[], cleanups: Cleanups): Promise<number> {
  const approve = parseApproveArgs(args);
  const key = approve.keyFile !== undefined ? readSigningKey(approve.keyFile) : undefined;
  const { agent } = await connectAgent(cleanups, { startServer: false });
  let decision = approve.decision;
  if (key) {
    // Signed over the arguments' hash: the one given, else the pending call's own.
    let argumentsSha256 = decision.argumentsSha256;
    if (argumentsSha256 === undefined) {
      const pending = (await agent.pendingApprovals(approve.conversationId)).find(
        (approval) => approval.toolCallId === decision.toolCallId,
      );
      if (!pending) throw new Error(`no approval is pending for tool call ${decision.toolCallId}`);
      argumentsSha256 = pending.argumentsSha256;
    }
    decision = signDecision(approve.conversationId, { ...decision, argumentsSha256 }, key);
  }
  const receipt = await agent.approve(approve.conversationId, decision);
  process.stdout.write(
    approve.json
      ? `${JSON.stringify(receipt)}\n`
      : `${receipt.decision.replace('_', ' ')}: ${receipt.toolName} (${receipt.toolCallId}) in ${approve.conversationId}${receipt.waitingFor ? `; waiting for more: ${receipt.waitingFor}` : ''}\n`,
  );
  return 0;
}
