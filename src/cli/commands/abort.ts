import type { AbortInput } from '../../shared/conversation-api';
import { type Cleanups, log } from '../cleanups';
import { connectAgent } from '../connect-agent';
import { conversationIdArg, namedPositionals, parseCommandArgs } from '../parse-command-args';
import { currentUserName } from '../user-name';

export interface AbortArgs {
  conversationId: string;
  input: AbortInput;
  json: boolean;
}

export function parseAbortArgs(args: string[], defaultBy: () => string = currentUserName): AbortArgs {
  const { values, positionals } = parseCommandArgs('abort', {
    args,
    allowPositionals: true,
    options: {
      reason: { type: 'string' },
      by: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const { ID } = namedPositionals('abort', positionals, ['ID'] as const);
  return {
    conversationId: conversationIdArg(ID),
    input: {
      by: values.by ?? defaultBy(),
      ...(values.reason !== undefined ? { reason: values.reason } : {}),
    },
    json: values.json,
  };
}

/** `abort`: stop the run in progress (model call and tools); the conversation takes the next message. */
export async function abortCommand(args: string[], cleanups: Cleanups): Promise<number> {
  const abort = parseAbortArgs(args);
  const { agent } = await connectAgent(cleanups, { startServer: false });
  const receipt = await agent.abort(abort.conversationId, abort.input);
  if (abort.json) process.stdout.write(`${JSON.stringify(receipt)}\n`);
  else log(`aborting run ${receipt.run} of ${abort.conversationId}`);
  return 0;
}
