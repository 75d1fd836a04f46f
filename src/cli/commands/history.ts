import { buildTimeline } from '../../history/build-timeline';
import { formatTimeline } from '../../history/format-timeline';
import type { Cleanups } from '../cleanups';
import { connectAgent } from '../connect-agent';
import {
  conversationIdArg,
  namedPositionals,
  parseCommandArgs,
  positiveInteger,
} from '../parse-command-args';
import { readConversationHistory } from '../read-conversation-history';

export interface HistoryArgs {
  conversationId: string;
  json: boolean;
  /** Only the newest this many executions; all when absent. */
  executions?: number;
}

export function parseHistoryArgs(args: string[]): HistoryArgs {
  const { values, positionals } = parseCommandArgs('history', {
    args,
    allowPositionals: true,
    options: { json: { type: 'boolean', default: false }, executions: { type: 'string' } },
  });
  const { ID } = namedPositionals('history', positionals, ['ID'] as const);
  const executions = positiveInteger(values.executions, '--executions');
  return {
    conversationId: conversationIdArg(ID),
    json: values.json,
    ...(executions !== undefined ? { executions } : {}),
  };
}

/** `history`: the timeline of a conversation, read from the Temporal histories of all its executions. */
export async function historyCommand(args: string[], cleanups: Cleanups): Promise<number> {
  const history = parseHistoryArgs(args);
  const { client } = await connectAgent(cleanups, { startServer: false });
  const executions = await readConversationHistory(client, history.conversationId, history.executions);
  const timeline = buildTimeline(
    history.conversationId,
    executions,
    client.options.loadedDataConverter.payloadConverter,
  );
  process.stdout.write(history.json ? `${JSON.stringify(timeline)}\n` : formatTimeline(timeline));
  return 0;
}
