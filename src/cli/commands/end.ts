import { type Cleanups } from '../cleanups';
import { connectAgent } from '../connect-agent';
import { conversationIdArg, namedPositionals, parseCommandArgs } from '../parse-command-args';

export interface EndArgs {
  conversationId: string;
  reason?: string;
  json: boolean;
}

export function parseEndArgs(args: string[]): EndArgs {
  const { values, positionals } = parseCommandArgs('end', {
    args,
    allowPositionals: true,
    options: { reason: { type: 'string' }, json: { type: 'boolean', default: false } },
  });
  const { ID } = namedPositionals('end', positionals, ['ID'] as const);
  return {
    conversationId: conversationIdArg(ID),
    ...(values.reason !== undefined ? { reason: values.reason } : {}),
    json: values.json,
  };
}

/** `end`: the conversation ends after its current run and any queued messages. */
export async function endCommand(args: string[], cleanups: Cleanups): Promise<number> {
  const end = parseEndArgs(args);
  const { agent } = await connectAgent(cleanups, { startServer: false });
  await agent.end(end.conversationId, end.reason);
  process.stdout.write(
    end.json
      ? `${JSON.stringify({ conversationId: end.conversationId, ending: true })}\n`
      : `${end.conversationId} ends after its current run and any queued messages\n`,
  );
  return 0;
}
