import { type Cleanups, log } from '../cleanups';
import { connectAgent } from '../connect-agent';
import { conversationIdArg, namedPositionals, parseCommandArgs } from '../parse-command-args';
import { UsageError } from '../usage-error';
import { currentUserName } from '../user-name';

/** `choose ID TOOL_CALL_ID [N]`: answers a RAP tool's user choice; without N, its default (a dismissed prompt). */
export async function chooseCommand(args: string[], cleanups: Cleanups): Promise<number> {
  const { values, positionals } = parseCommandArgs('choose', {
    args,
    allowPositionals: true,
    options: { by: { type: 'string' }, json: { type: 'boolean', default: false } },
  });
  const index = positionals.length === 3 ? positionals[2] : undefined;
  const named = namedPositionals('choose', positionals.slice(0, index === undefined ? undefined : 2), [
    'ID',
    'TOOL_CALL_ID',
  ] as const);
  const selected = index === undefined ? undefined : Number(index);
  if (selected !== undefined && (!Number.isInteger(selected) || selected < 0)) {
    throw new UsageError(`choose: the choice must be a number from 0, got ${JSON.stringify(index)}`);
  }
  const conversationId = conversationIdArg(named.ID);
  const { agent } = await connectAgent(cleanups, { startServer: false });
  const receipt = await agent.answerUserChoice(conversationId, {
    toolCallId: named.TOOL_CALL_ID,
    ...(selected !== undefined ? { selected } : {}),
    by: values.by ?? currentUserName(),
  });
  if (values.json) process.stdout.write(`${JSON.stringify(receipt)}\n`);
  else log(`choice ${receipt.selected} sent for ${named.TOOL_CALL_ID} in ${conversationId}`);
  return 0;
}
