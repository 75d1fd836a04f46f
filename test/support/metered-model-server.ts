import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ChatRequest, ModelScript, type ScriptedReply, writeAnswer } from './scripted-model';

/**
 * What the endpoint does with its `index`-th request (from 0): answer after `holdMs`, or never. With
 * `restAfter`, the answer streams its first piece of text, then sends the rest once `restAfter` settles.
 */
export type MeteredAnswer =
  | { reply: ScriptedReply; holdMs: number; retryAfterSeconds?: number; restAfter?: Promise<unknown> }
  | { hang: true };

export interface MeteredModelServer {
  baseUrl: string;
  /** Requests received so far. */
  readonly requests: number;
  /** Requests being answered now, and the most there ever were at once. */
  readonly inFlight: number;
  readonly peakInFlight: number;
  /** When each request arrived (epoch ms by this process's clock), in order. */
  readonly arrivals: readonly number[];
  close(): Promise<void>;
}

/**
 * An OpenAI-compatible endpoint on 127.0.0.1 that counts the requests it is answering at once, for
 * tests of limits the whole fleet shares. A request counts from its arrival until its answer ends or
 * its connection closes.
 */
export async function startMeteredModelServer(
  answerFor: (request: ChatRequest, index: number) => MeteredAnswer,
): Promise<MeteredModelServer> {
  let requests = 0;
  let inFlight = 0;
  let peakInFlight = 0;
  const arrivals: number[] = [];
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const index = requests++;
      arrivals.push(Date.now());
      inFlight++;
      peakInFlight = Math.max(peakInFlight, inFlight);
      let counted = true;
      const done = () => {
        if (counted) inFlight--;
        counted = false;
      };
      response.once('close', done);
      const answer = answerFor(JSON.parse(body) as ChatRequest, index);
      if ('hang' in answer) return;
      setTimeout(() => {
        const http = new ModelScript([answer.reply]).answer(JSON.parse(body) as ChatRequest);
        const headers = {
          ...http.headers,
          ...(answer.retryAfterSeconds !== undefined
            ? { 'retry-after': String(answer.retryAfterSeconds) }
            : {}),
        };
        response.writeHead(http.status, headers);
        const finish = () => {
          done();
          response.end();
        };
        if (answer.restAfter) {
          // The role, then the first piece of text: the call is streaming.
          const events = http.body.split(/(?<=\n\n)/);
          response.write(events.slice(0, 2).join(''));
          void answer.restAfter.finally(() => {
            response.write(events.slice(2).join(''));
            finish();
          });
          return;
        }
        void writeAnswer(http, new ModelScript([]), (piece) => response.write(piece)).finally(finish);
      }, answer.holdMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    get requests() {
      return requests;
    },
    get inFlight() {
      return inFlight;
    },
    get peakInFlight() {
      return peakInFlight;
    },
    arrivals,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
