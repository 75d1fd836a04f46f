import type { ApprovalModeInput } from '../../shared/conversation-api';
import { readSigningKey, signApprovalMode } from '../../client/sign-decision';
import type { Cleanups } from '../cleanups';
import { connectAgent } from '../connect-agent';
import { conversationIdArg, namedPositionals, parseCommandArgs } from '../parse-command-args';
import { UsageError } from '../usage-error';
import { currentUserName } from '../user-name';

const MODES = ['default', 'ask', 'auto'] as const;

export interface ModeArgs {
  conversationId: string;
  change: ApprovalModeInput & { by: string };
  json: boolean;
  /** An Ed25519 private key (PEM) to sign the change with, for workers that take signed decisions only. */
  keyFile?: string;
}

export function parseModeArgs(args: string[], defaultBy: () => string = currentUserName): ModeArgs {
  const { values, positionals } = parseCommandArgs('mode', {
    args,
    allowPositionals: true,
    options: {
      by: { type: 'string' },
      key: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const { ID, MODE } = namedPositionals('mode', positionals, ['ID', 'MODE'] as const);
  const mode = MODES.find((known) => known === MODE);
  if (!mode) throw new UsageError(`mode: MODE is one of ${MODES.join(', ')}, not ${JSON.stringify(MODE)}`);
  return {
    conversationId: conversationIdArg(ID),
    change: { mode, by: values.by ?? defaultBy() },
    json: values.json,
    ...(values.key !== undefined ? { keyFile: values.key } : {}),
  };
}

/**
 * `mode`: set a running conversation's approval mode. Asking for less than now is a decision, like
 * an approval: refused (exit 1, saying why) unless by one of its approvers, and signed with --key
 * where the worker takes signed decisions only.
 */
export async function modeCommand(args: string[], cleanups: Cleanups): Promise<number> {
  const parsed = parseModeArgs(args);
  const key = parsed.keyFile !== undefined ? readSigningKey(parsed.keyFile) : undefined;
  const { agent } = await connectAgent(cleanups, { startServer: false });
  const change = key ? signApprovalMode(parsed.conversationId, parsed.change, key) : parsed.change;
  const receipt = await agent.setApprovalMode(parsed.conversationId, change);
  process.stdout.write(
    parsed.json
      ? `${JSON.stringify({ conversationId: parsed.conversationId, ...receipt })}\n`
      : `approval mode of ${parsed.conversationId}: ${receipt.mode}\n`,
  );
  return 0;
}
