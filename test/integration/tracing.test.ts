import { randomUUID } from 'node:crypto';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import nock from 'nock';
import { type Tracing, startTracing } from '../../src/worker/tracing';
import { ask } from '../support/ask';
import { NOCK_MODEL_URL, nockModel } from '../support/nock-model';
import { echoTool } from '../support/test-tools';
import { type TestHarness, startHarness, waitFor } from '../support/test-worker';

const exporter = new InMemorySpanExporter();
let tracing: Tracing;
let harness: TestHarness;

beforeAll(async () => {
  nock.disableNetConnect();
  nock.enableNetConnect(/127\.0\.0\.1|localhost/);
  tracing = await startTracing(new SimpleSpanProcessor(exporter), { OTEL_SERVICE_NAME: 'agent-under-test' });
  harness = await startHarness({ modelBaseUrl: NOCK_MODEL_URL, tools: [echoTool], tracing });
}, 120_000);
afterAll(async () => {
  await harness?.close();
  await tracing?.shutdown();
  nock.cleanAll();
  nock.enableNetConnect();
});

test('one trace follows a message from the client through the workflow to its activities, model calls with GenAI attributes', async () => {
  nockModel([
    { toolCalls: [{ id: 'call_echo', name: 'echo', arguments: { text: 'hi' } }] },
    { text: 'Echoed.' },
  ]);
  const id = `conv-${randomUUID()}`;
  const { finished } = await ask(harness.agent, id, 'Echo hi', { options: { approval: { mode: 'auto' } } });
  expect(finished).toMatchObject({ outcome: 'answered', answer: 'Echoed.' });

  const spans = await waitFor(async () => {
    const all = exporter.getFinishedSpans();
    return all.filter((span) => span.name.startsWith('chat ')).length === 2 ? all : undefined;
  }, 'the spans of the run');
  const named = (prefix: string) => spans.filter((span) => span.name.startsWith(prefix));
  const [start] = named('SignalWithStartWorkflow:conversation');
  expect(start).toBeDefined();
  const traceId = start!.spanContext().traceId;
  const inTrace = (span: ReadableSpan) => span.spanContext().traceId === traceId;

  // The workflow's signal handler continues the client's span; the activities it schedules hang off
  // the workflow's own span (still open: the conversation waits for its next message).
  expect(named('HandleSignal:userMessage').filter(inTrace)[0]!.parentSpanId).toBe(
    start!.spanContext().spanId,
  );
  const scheduled = named('StartActivity:').filter(inTrace);
  expect(scheduled.map((span) => span.name).sort()).toEqual([
    'StartActivity:admitConversation',
    'StartActivity:callModel',
    'StartActivity:callModel',
    'StartActivity:composeSystemPrompt',
    'StartActivity:listTools',
    'StartActivity:runTool',
  ]);
  expect(new Set(scheduled.map((span) => span.parentSpanId)).size).toBe(1);
  expect(named('RunActivity:runTool').filter(inTrace)).toHaveLength(1);
  const chats = named('chat ').filter(inTrace);
  expect(chats).toHaveLength(2);
  expect(chats[0]!.attributes).toMatchObject({
    'gen_ai.operation.name': 'chat',
    // The scripted endpoint's host is no provider the GenAI conventions name.
    'gen_ai.provider.name': '_OTHER',
    'server.address': 'model.test',
    'gen_ai.request.model': 'scripted-model',
    'gen_ai.usage.input_tokens': 10,
    'gen_ai.usage.output_tokens': 5,
  });
  // Each model call's span is a child of its activity's span.
  const callModelSpans = new Set(named('RunActivity:callModel').map((span) => span.spanContext().spanId));
  for (const chat of chats) expect(callModelSpans.has(chat.parentSpanId!)).toBe(true);
  expect(start!.resource.attributes['service.name']).toBe('agent-under-test');
});
