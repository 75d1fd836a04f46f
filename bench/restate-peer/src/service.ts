/**
 * The Restate peer's service process: the turn loop as a virtual object keyed by conversation, its
 * transcript in the object's state, each model call and each tool call a `ctx.run` step (journaled
 * by the Restate server before the loop goes on). An HTTP/2 endpoint on BENCH_SERVICE_PORT, which
 * the runner registers with the server.
 */
import * as restate from '@restatedev/restate-sdk';
import type { Message, ToolCall } from '../../../src/shared/messages';
import { servePeer } from '../../support/protocol';
import { reportedSteps } from '../../support/peers/reported-steps';

const steps = reportedSteps(process.env.BENCH_MODEL_URL!);

const conversation = restate.object({
  name: 'Conversation',
  handlers: {
    /** One user message, run to the model's text answer; returns the number of messages kept. */
    async turn(ctx: restate.ObjectContext, text: string): Promise<number> {
      const transcript = (await ctx.get<Message[]>('transcript')) ?? [];
      transcript.push({ role: 'user', content: text, messageId: String(transcript.length), timestamp: 0 });
      for (;;) {
        const reply = await ctx.run('callModel', () => steps.callModel(transcript));
        transcript.push(reply);
        const calls = reply.content.filter((block): block is ToolCall => block.type === 'toolCall');
        if (calls.length === 0) break;
        const results = await restate.RestatePromise.all(
          calls.map((call) => ctx.run(`runTool ${call.name}`, () => steps.runTool(call))),
        );
        transcript.push(...results);
      }
      ctx.set('transcript', transcript);
      return transcript.length;
    },
  },
});

let server: { close(callback: () => void): void } | undefined;

void servePeer({
  async start() {
    const endpoint = restate.endpoint().bind(conversation);
    const http2 = await import('node:http2');
    const listening = http2.createServer(endpoint.http2Handler());
    await new Promise<void>((resolve, reject) => {
      listening.once('error', reject);
      listening.listen(Number(process.env.BENCH_SERVICE_PORT), '127.0.0.1', resolve);
    });
    server = listening;
  },
  // The runner talks to the Restate server's ingress, not to this process.
  open: () => Promise.reject(new Error('conversations go through the Restate ingress')),
  turn: () => Promise.reject(new Error('turns go through the Restate ingress')),
  // The server keeps its HTTP/2 sessions open: closing waits for them at most a second.
  stop: () =>
    new Promise((resolve) => {
      setTimeout(resolve, 1_000).unref();
      if (server) server.close(() => resolve());
      else resolve();
    }),
});
