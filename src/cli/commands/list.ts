import type { ConversationListing } from '../../client/agent-client';
import { type Cleanups, log } from '../cleanups';
import { connectAgent } from '../connect-agent';
import { namedPositionals, parseCommandArgs, positiveInteger } from '../parse-command-args';
import { printable } from '../../shared/printable-text';

const DEFAULT_LIMIT = 100;

export interface ListArgs {
  json: boolean;
  limit: number;
}

export function parseListArgs(args: string[]): ListArgs {
  const { values, positionals } = parseCommandArgs('list', {
    args,
    allowPositionals: true,
    options: { json: { type: 'boolean', default: false }, limit: { type: 'string' } },
  });
  namedPositionals('list', positionals, [] as const);
  return { json: values.json, limit: positiveInteger(values.limit, '--limit') ?? DEFAULT_LIMIT };
}

export function formatListing(listing: ConversationListing): string {
  return `${listing.conversationId}  started ${listing.startTime.toISOString()}`;
}

/** `list`: open conversations on the task queue, from Temporal visibility, on stdout. */
export async function listCommand(args: string[], cleanups: Cleanups): Promise<number> {
  const list = parseListArgs(args);
  const { agent, settings } = await connectAgent(cleanups, { startServer: false });
  let shown = 0;
  for await (const listing of agent.list()) {
    if (shown === list.limit) {
      log(`more than ${list.limit} open conversations; --limit N shows more`);
      break;
    }
    shown++;
    process.stdout.write(`${list.json ? JSON.stringify(listing) : printable(formatListing(listing))}\n`);
  }
  if (shown === 0 && !list.json) log(`no open conversations on task queue ${settings.taskQueue}`);
  return 0;
}
