import { type IncomingHttpHeaders, type Server, createServer } from 'node:http';
import { ApplicationFailure } from '@temporalio/common';
import { createDeliverA2APush } from '../../src/activities/deliver-a2a-push';
import type { A2APushDelivery } from '../../src/shared/a2a-push';

/** A receiver on 127.0.0.1 that answers `status`; `endless`: with a body that never ends. */
async function receiver(status: number, endless = false) {
  const got: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      got.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      response.writeHead(status, { 'content-type': 'text/plain' });
      if (!endless) return response.end('ok');
      const more = () => {
        while (response.write('x'.repeat(64 * 1024)));
      };
      response.on('drain', more);
      more();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    port,
    got,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const delivery = (url: string): A2APushDelivery => ({
  notificationId: 'conv/run/7/1',
  url,
  token: 'push-secret',
  authentication: { scheme: 'Bearer', credentials: 'receiver-key' },
  body: {
    statusUpdate: {
      taskId: 'conv/m1',
      contextId: 'conv',
      status: { state: 'TASK_STATE_COMPLETED' },
      metadata: { 'durable-agent/notification-id': 'conv/run/7/1' },
    },
  },
});

const nonRetryable = (error: unknown) => error instanceof ApplicationFailure && error.nonRetryable;

test('a push URL to loopback, by address or by a name that resolves there, is refused for good unless allowed', async () => {
  const target = await receiver(200);
  try {
    const deliver = createDeliverA2APush();
    for (const url of [`http://127.0.0.1:${target.port}/push`, `http://localhost:${target.port}/push`]) {
      const refusal = await deliver(delivery(url)).catch((error: unknown) => error);
      expect(nonRetryable(refusal)).toBe(true);
      expect((refusal as Error).message).toMatch(/private, loopback or reserved/);
    }
    expect(target.got).toHaveLength(0);
  } finally {
    await target.close();
  }
});

test('allowed, it posts the status update with the token, the authentication and the notification id', async () => {
  const target = await receiver(200);
  try {
    const deliver = createDeliverA2APush({ allowPrivateNetwork: true });
    expect(await deliver(delivery(`http://127.0.0.1:${target.port}/push`))).toEqual({ status: 200 });
    expect(target.got).toHaveLength(1);
    const [{ headers, body }] = target.got as [{ headers: IncomingHttpHeaders; body: string }];
    expect(headers).toMatchObject({
      'x-a2a-notification-token': 'push-secret',
      authorization: 'Bearer receiver-key',
      'durable-agent-delivery': 'conv/run/7/1',
      'content-type': 'application/a2a+json',
    });
    expect(JSON.parse(body)).toEqual(delivery('').body);
  } finally {
    await target.close();
  }
});

test("the receiver's answer body is never read: an endless one costs nothing", async () => {
  const target = await receiver(200, true);
  try {
    const deliver = createDeliverA2APush({ allowPrivateNetwork: true, timeoutMs: 30_000 });
    expect(await deliver(delivery(`http://127.0.0.1:${target.port}/push`))).toEqual({ status: 200 });
  } finally {
    await target.close();
  }
});

test('a refusal for good is not retried; a server error is', async () => {
  const gone = await receiver(410);
  const busy = await receiver(503);
  try {
    const deliver = createDeliverA2APush({ allowPrivateNetwork: true });
    expect(
      nonRetryable(
        await deliver(delivery(`http://127.0.0.1:${gone.port}/`)).catch((error: unknown) => error),
      ),
    ).toBe(true);
    const retried = await deliver(delivery(`http://127.0.0.1:${busy.port}/`)).catch(
      (error: unknown) => error,
    );
    expect(retried).toBeInstanceOf(Error);
    expect(nonRetryable(retried)).toBe(false);
    expect((retried as Error).message).toMatch(/answered 503/);
  } finally {
    await gone.close();
    await busy.close();
  }
});
