import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { createActivities } from '../../src/activities/create-activities';
import { ToolRegistry } from '../../src/tools/registry';
import { activityDepsFrom } from '../../src/worker/agent-plugin-options';

// A worker set up for Anthropic's API neither loads OpenAI's SDK nor makes its client: loading it
// at all fails this file.
jest.mock('openai', () => {
  throw new Error('the OpenAI SDK was loaded');
});

const stream = readFileSync(
  path.join(__dirname, '..', 'fixtures', 'anthropic-messages', 'tool-loop-3.sse'),
  'utf8',
);

test("a worker on Anthropic's API calls the model without OpenAI's SDK", async () => {
  const requests: string[] = [];
  const server = http.createServer((request, response) => {
    requests.push(request.url ?? '');
    request.resume();
    request.on('end', () => response.writeHead(200, { 'content-type': 'text/event-stream' }).end(stream));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { deps } = await activityDepsFrom({
      model: {
        apiKey: 'unused',
        model: 'claude-sonnet-4-6',
        api: 'anthropic',
        anthropic: { apiKey: 'test', baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}` },
      },
      activities: { tools: new ToolRegistry([]), loadTranscript: async () => [] },
    });
    const { callModel } = createActivities(deps);
    const reply = await new MockActivityEnvironment({}, { logger: new DefaultLogger('ERROR') }).run(() =>
      callModel({
        transcript: {
          conversationId: 'conv-anthropic',
          generation: 0,
          base: 0,
          newMessages: [{ role: 'user', content: 'What does it say?', messageId: 'm1', timestamp: 1 }],
        },
        toolNames: [],
      }),
    );
    expect(reply).toMatchObject({
      role: 'assistant',
      content: [{ type: 'text', text: 'notes.txt points to todo.txt, which lists one thing: buy milk.' }],
    });
    expect(requests).toEqual(['/v1/messages']);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});
