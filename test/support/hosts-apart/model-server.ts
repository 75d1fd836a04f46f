/**
 * The scripted model as an HTTPS server in a process of its own, so a test can run it on a host
 * (network namespace) apart from the workers that call it. Environment: MODEL_HOST, MODEL_SCRIPT
 * (the steps, JSON), MODEL_API_KEY (a request with another bearer key is 401), TLS_CERT and TLS_KEY
 * (PEM files), MODEL_HOLD (a file: while it exists, a paced answer's text is all sent but its stream
 * does not end, so a test can see the text reach a client while the call still runs). Prints
 * `{"port":N}`, then one JSON line per request it answered: its messages.
 */
import { existsSync, readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import {
  type ChatRequest,
  type HttpAnswer,
  ModelScript,
  type ScriptStep,
  writeAnswer,
} from '../scripted-model';

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
const say = (line: unknown) => process.stdout.write(`${JSON.stringify(line)}\n`);

const script = new ModelScript(JSON.parse(env('MODEL_SCRIPT')) as ScriptStep[]);
const apiKey = env('MODEL_API_KEY');
/** However long a test holds an answer, it ends after this. */
const MAX_HOLD_MS = 100_000;

/** A paced answer's parts, the last three (the finish, the usage, [DONE]) only once MODEL_HOLD is gone. */
async function writeHeld(answer: HttpAnswer, write: (piece: string) => void): Promise<void> {
  const parts = answer.paced!.parts;
  for (const [index, part] of parts.entries()) {
    if (index === parts.length - 3) {
      for (const until = Date.now() + MAX_HOLD_MS; existsSync(env('MODEL_HOLD')) && Date.now() < until;) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    await new Promise((resolve) => setTimeout(resolve, answer.paced!.delayMs));
    write(part);
  }
}
const server = https.createServer(
  { cert: readFileSync(env('TLS_CERT')), key: readFileSync(env('TLS_KEY')) },
  (request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      if (request.headers.authorization !== `Bearer ${apiKey}`) {
        say({ unauthorized: request.headers.authorization ?? null });
        response.writeHead(401).end();
        return;
      }
      if (request.method !== 'POST' || !request.url?.endsWith('/chat/completions')) {
        response.writeHead(404).end();
        return;
      }
      const chat = JSON.parse(body) as ChatRequest;
      say({ messages: chat.messages });
      const answer = script.answer(chat);
      response.writeHead(answer.status, answer.headers);
      const write = (piece: string) => response.write(piece);
      void (answer.paced ? writeHeld(answer, write) : writeAnswer(answer, script, write)).finally(() =>
        response.end(),
      );
    });
  },
);
server.listen(0, env('MODEL_HOST'), () => say({ port: (server.address() as AddressInfo).port }));
