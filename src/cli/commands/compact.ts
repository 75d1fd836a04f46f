import { type Cleanups, log } from '../cleanups';
import { connectAgent } from '../connect-agent';
import { conversationIdArg, namedPositionals, parseCommandArgs } from '../parse-command-args';

export function parseCompactArgs(args: string[]): { conversationId: string; json: boolean } {
  const { values, positionals } = parseCommandArgs('compact', {
    args,
    allowPositionals: true,
    options: { json: { type: 'boolean', default: false } },
  });
  const { ID } = namedPositionals('compact', positionals, ['ID'] as const);
  return { conversationId: conversationIdArg(ID), json: values.json };
}

/** `compact`: summarise the conversation's older turns now (at the next turn boundary of a run in progress). */
export async function compactCommand(args: string[], cleanups: Cleanups): Promise<number> {
  const compact = parseCompactArgs(args);
  const { agent } = await connectAgent(cleanups, { startServer: false });
  const receipt = await agent.compact(compact.conversationId);
  if (compact.json) process.stdout.write(`${JSON.stringify(receipt)}\n`);
  else if (!receipt.compacted) log(`nothing to compact in ${compact.conversationId}: it has a single turn`);
  else
    log(
      `compacted ${compact.conversationId}: ${receipt.removedMessages} messages summarised, about ${receipt.tokensBefore} → ${receipt.tokensAfter} tokens`,
    );
  return 0;
}
