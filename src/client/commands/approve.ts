import type { ApprovalDecision } from '../../shared/approvals';
import { decisionFromFlags } from './approval-choices';
import { type Cleanups, log } from './cleanups';
import { connectAgent } from './connect-agent';
import { conversationIdArg, namedPositionals, parseCommandArgs } from './parse-command-args';
import { currentUserName } from './user-name';

export interface ApproveArgs {
  conversationId: string;
  decision: ApprovalDecision;
  json: boolean;
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
      json: { type: 'boolean', default: false },
    },
  });
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
    },
    json: values.json,
  };
}

/** `approve`: decide a pending approval; refused (exit 1, saying why) when the conversation will not take it. */
export async function approveCommand(args: string[], cleanups: Cleanups): Promise<number> {
  const approve = parseApproveArgs(args);
  const { agent } = await connectAgent(cleanups, { startServer: false });
  const receipt = await agent.approve(approve.conversationId, approve.decision);
  if (approve.json) process.stdout.write(`${JSON.stringify(receipt)}\n`);
  else
    log(
      `${receipt.decision.replace('_', ' ')}: ${receipt.toolName} (${receipt.toolCallId}) in ${approve.conversationId}`,
    );
  return 0;
}
