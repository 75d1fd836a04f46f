import { type Cleanups, log } from '../cleanups';
import { connectAgent } from '../connect-agent';
import { followRun, reportRunEnd } from '../terminal/follow-run';
import { conversationIdArg, parseCommandArgs } from '../parse-command-args';
import { UsageError } from '../usage-error';

export interface SteerArgs {
  conversationId: string;
  text: string;
  wait: boolean;
  json: boolean;
  /** Who steers (checked against the conversation's `owners`). */
  sender?: string;
}

export function parseSteerArgs(args: string[]): SteerArgs {
  const { values, positionals } = parseCommandArgs('steer', {
    args,
    allowPositionals: true,
    options: {
      'no-wait': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      sender: { type: 'string' },
    },
  });
  const [conversationId, ...words] = positionals;
  if (!conversationId) throw new UsageError('steer needs a conversation ID and a message');
  const text = words.join(' ').trim();
  if (!text) throw new UsageError('steer needs a message after the conversation ID');
  return {
    conversationId: conversationIdArg(conversationId),
    text,
    wait: !values['no-wait'],
    json: values.json,
    ...(values.sender !== undefined ? { sender: values.sender } : {}),
  };
}

/** `steer`: interrupt the running tools with a message and follow the run to its answer, unless --no-wait. */
export async function steerCommand(args: string[], cleanups: Cleanups): Promise<number> {
  const steer = parseSteerArgs(args);
  const { agent } = await connectAgent(cleanups, { startServer: false });
  const steered = await agent.steer(steer.conversationId, steer.text, { sender: steer.sender });
  if (!steer.json) {
    log(
      steered.interrupting
        ? `steering the run in progress of ${steer.conversationId}`
        : `no run was in progress: the message started one in ${steer.conversationId}`,
    );
  }
  if (!steer.wait) {
    if (steer.json) process.stdout.write(`${JSON.stringify(steered)}\n`);
    return 0;
  }
  // To the end of the run the steering message joined (or started).
  const finished = await followRun({ agent, run: steered, json: steer.json });
  return reportRunEnd(steer.conversationId, finished, steer.json);
}
