import type { ConversationOptionsInput } from '../../shared/conversation-options';
import { type Cleanups, log } from '../cleanups';
import { connectAgent } from '../connect-agent';
import { CONVERSATION_OPTION_FLAGS, conversationOptionsFromFlags } from '../conversation-flags';
import { followRun, reportRunEnd } from '../terminal/follow-run';
import { conversationIdArg, parseCommandArgs } from '../parse-command-args';
import { UsageError } from '../usage-error';

const NO_WORKER_HINT_AFTER_MS = 15_000;

export interface SendArgs {
  conversationId: string;
  text: string;
  wait: boolean;
  json: boolean;
  options: ConversationOptionsInput;
  /** Who sends the message (checked against the conversation's `owners`). */
  sender?: string;
}

export function parseSendArgs(args: string[]): SendArgs {
  const { values, positionals } = parseCommandArgs('send', {
    args,
    allowPositionals: true,
    options: {
      ...CONVERSATION_OPTION_FLAGS,
      'no-wait': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      sender: { type: 'string' },
    },
  });
  const [conversationId, ...words] = positionals;
  if (!conversationId) throw new UsageError('send needs a conversation ID and a message');
  const text = words.join(' ').trim();
  if (!text) throw new UsageError('send needs a message after the conversation ID');
  return {
    conversationId: conversationIdArg(conversationId),
    text,
    wait: !values['no-wait'],
    json: values.json,
    options: conversationOptionsFromFlags(values),
    ...(values.sender !== undefined ? { sender: values.sender } : {}),
  };
}

/**
 * `send`: a user message, through whatever server and workers are running (it starts no worker).
 * Follows the run that takes it and prints the answer, unless --no-wait.
 */
export async function sendCommand(args: string[], cleanups: Cleanups): Promise<number> {
  const send = parseSendArgs(args);
  const { agent, settings } = await connectAgent(cleanups, { startServer: true });
  const sent = await agent.send(send.conversationId, send.text, {
    options: send.options,
    sender: send.sender,
  });
  if (!send.json) {
    log(
      `${sent.started ? 'started conversation' : 'sent to conversation'} ${send.conversationId} (message ${sent.messageId})`,
    );
  }
  if (!send.wait) {
    if (send.json) process.stdout.write(`${JSON.stringify(sent)}\n`);
    return 0;
  }
  const finished = await followRun({
    agent,
    run: sent,
    json: send.json,
    quietHint: {
      afterMs: NO_WORKER_HINT_AFTER_MS,
      text: `Nothing has picked up the message yet: is a worker running on task queue ${settings.taskQueue}? (\`durable-agent worker\`)`,
    },
  });
  return reportRunEnd(send.conversationId, finished, send.json);
}
