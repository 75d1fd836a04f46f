/**
 * The DBOS peer's service process: each conversation one workflow that waits for its messages
 * (`DBOS.recv`), runs each as the turn loop with every model call and tool call a step
 * (`DBOS.runStep`, checkpointed in PostgreSQL before the loop goes on), and marks the turn's end
 * with an event (`DBOS.setEvent`). The runner's calls come over IPC and use DBOS's own client
 * functions here (`send`, `getEvent`). On launch DBOS recovers the workflows a previous process of
 * the same application left pending.
 */
import { DBOS } from '@dbos-inc/dbos-sdk';
import type { Message, ToolCall } from '../../../src/shared/messages';
import { parseDirective } from '../../support/model-server';
import { servePeer } from '../../support/protocol';
import { reportedSteps } from '../../support/peers/reported-steps';

const steps = reportedSteps(process.env.BENCH_MODEL_URL!);
/** How long a conversation waits for its next message (it waits again after). */
const IDLE_SECONDS = 86_400;
const TURN_TIMEOUT_SECONDS = 120;

const conversation = DBOS.registerWorkflow(
  async (): Promise<void> => {
    const transcript: Message[] = [];
    for (;;) {
      const text = await DBOS.recv<string>('message', IDLE_SECONDS);
      if (text === null) continue;
      transcript.push({ role: 'user', content: text, messageId: String(transcript.length), timestamp: 0 });
      for (;;) {
        const reply = await DBOS.runStep(() => steps.callModel(transcript), { name: 'callModel' });
        transcript.push(reply);
        const calls = reply.content.filter((block): block is ToolCall => block.type === 'toolCall');
        if (calls.length === 0) break;
        // Started in order, as DBOS asks of steps run at once.
        transcript.push(
          ...(await Promise.all(
            calls.map((call) => DBOS.runStep(() => steps.runTool(call), { name: 'runTool' })),
          )),
        );
      }
      await DBOS.setEvent(`turn-${parseDirective(text)?.t ?? 0}`, transcript.length);
    }
  },
  { name: 'conversation' },
);

void servePeer({
  async start() {
    DBOS.setConfig({
      name: process.env.BENCH_APP_NAME!,
      systemDatabaseUrl: process.env.BENCH_DATABASE_URL!,
      logLevel: 'error',
    });
    await DBOS.launch();
  },
  async open(conversationId) {
    await DBOS.startWorkflow(conversation, { workflowID: conversationId })();
  },
  async turn(conversationId, text) {
    const turn = parseDirective(text)?.t ?? 0;
    await DBOS.send(conversationId, text, 'message');
    const done = await DBOS.getEvent<number>(conversationId, `turn-${turn}`, TURN_TIMEOUT_SECONDS);
    if (done === null)
      throw new Error(`turn ${turn} of ${conversationId} not done in ${TURN_TIMEOUT_SECONDS} s`);
  },
  stop: () => DBOS.shutdown(),
});
