import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import OpenAI from 'openai';
import { chatCompletionsWire } from '../../src/activities/models/openai/chat-wire';
import { streamedModelCall } from '../../src/activities/models/streamed-model-call';
import { modelStreamTimeoutsFromEnv } from '../../src/worker/model-stream-timeouts-settings';

const chunk = (delta: unknown, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

/** An endpoint that sends `pieces`, each after its pause, and then ends the stream or goes quiet. */
async function endpoint(pieces: Array<{ afterMs: number; text: string }>, end: boolean) {
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', async () => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(chunk({ role: 'assistant' }));
      for (const piece of pieces) {
        await new Promise((resolve) => setTimeout(resolve, piece.afterMs));
        if (response.destroyed) return;
        response.write(piece.text);
      }
      if (end) response.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const openai = new OpenAI({
    baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    apiKey: 'test',
    maxRetries: 0,
  });
  return { openai, close: () => (server.closeAllConnections(), new Promise((r) => server.close(r))) };
}

const call = (openai: OpenAI, timeouts: { firstTokenMs: number; idleMs: number }) =>
  new MockActivityEnvironment({ heartbeatTimeoutMs: 10_000 }, { logger: new DefaultLogger('ERROR') }).run(
    () =>
      streamedModelCall(
        chatCompletionsWire(openai),
        {
          model: 'm',
          provider: 'openai',
          messages: [{ role: 'user', content: 'hi', messageId: 'm1', timestamp: 0 }],
          tools: [],
        },
        { timeouts },
      ),
  );

test('an endpoint that accepts the request and sends no first token is given up on, to be tried again', async () => {
  const model = await endpoint([], false);
  try {
    const failure = await call(model.openai, { firstTokenMs: 300, idleMs: 5_000 }).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({
      type: 'ModelTimeout',
      nonRetryable: false,
      message: 'the model endpoint sent no first token for 0.3 s',
    });
  } finally {
    await model.close();
  }
});

test('a stream that stops half-way is given up on once it has been quiet for the idle timeout', async () => {
  const model = await endpoint([{ afterMs: 10, text: chunk({ content: 'Hel' }) }], false);
  try {
    await expect(call(model.openai, { firstTokenMs: 5_000, idleMs: 300 })).rejects.toMatchObject({
      type: 'ModelTimeout',
      message: 'the model endpoint stopped sending for 0.3 s',
    });
  } finally {
    await model.close();
  }
});

test('a slow stream whose pieces each come within the idle timeout is read to the end', async () => {
  const model = await endpoint(
    [
      { afterMs: 200, text: chunk({ content: 'Hel' }) },
      { afterMs: 200, text: chunk({ content: 'lo' }) },
      { afterMs: 200, text: chunk({}, 'stop') },
    ],
    true,
  );
  try {
    // 600 ms in all: longer than either timeout, but no gap is.
    const reply = (await call(model.openai, { firstTokenMs: 400, idleMs: 400 })) as { content: unknown };
    expect(reply.content).toEqual([{ type: 'text', text: 'Hello' }]);
  } finally {
    await model.close();
  }
});

test('the timeouts come from the environment, in whole milliseconds of at least a second', () => {
  expect(modelStreamTimeoutsFromEnv({})).toEqual({ firstTokenMs: 180_000, idleMs: 60_000 });
  expect(
    modelStreamTimeoutsFromEnv({
      AGENT_MODEL_FIRST_TOKEN_TIMEOUT_MS: '30000',
      AGENT_MODEL_IDLE_TIMEOUT_MS: '5000',
    }),
  ).toEqual({ firstTokenMs: 30_000, idleMs: 5_000 });
  expect(() => modelStreamTimeoutsFromEnv({ AGENT_MODEL_IDLE_TIMEOUT_MS: '10' })).toThrow(
    'AGENT_MODEL_IDLE_TIMEOUT_MS must be a whole number ≥ 1000, not "10"',
  );
});
