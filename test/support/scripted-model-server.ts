import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ChatRequest, ModelScript, type ScriptStep, writeAnswer } from './scripted-model';

export interface ScriptedModelServer {
  baseUrl: string;
  script: ModelScript;
  close(): Promise<void>;
}

/** The scripted model as a real HTTP server on 127.0.0.1, for workers in other processes. */
export async function startScriptedModelServer(steps: ScriptStep[]): Promise<ScriptedModelServer> {
  const script = new ModelScript(steps);
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      if (request.method !== 'POST' || !request.url?.endsWith('/chat/completions')) {
        response.writeHead(404).end();
        return;
      }
      const answer = script.answer(JSON.parse(body) as ChatRequest);
      response.writeHead(answer.status, answer.headers);
      void writeAnswer(answer, script, (piece) => response.write(piece)).finally(() => response.end());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    script,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
