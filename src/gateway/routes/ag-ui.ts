import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { GatewayToken } from '../gateway-api';
import type { GatewayAccess } from '../gateway-access';
import type { GatewayDeps } from '../gateway-deps';
import { parseBody } from '../gateway-request';
import { streamEvents } from '../event-stream';
import { type AgUiCursor, parseCursor } from '../ag-ui/ag-ui-cursor';
import { agUiFrame } from '../ag-ui/ag-ui-events';
import { type AgUiIntake, deliverRunInput } from '../ag-ui/ag-ui-intake';
import { type RunAgentInput, RunAgentInputSchema } from '../ag-ui/ag-ui-input';
import { agUiLookups } from '../ag-ui/ag-ui-lookups';
import { EarlyWatch } from '../ag-ui/early-watch';
import { type AgUiLookups, AgUiTranslator } from '../ag-ui/ag-ui-translator';

/**
 * AG-UI 1.0 on the gateway: `POST /v1/ag-ui` takes a run input (thread = conversation) and answers
 * with the run's events as server-sent events, until the conversation's run ends or waits for the
 * page (an approval: an interrupt; the page's own tool: its call left pending). The page answers
 * with the next run input, and reconnects after a drop by sending the same input again with the
 * last event's id (`Last-Event-ID`, or `forwardedProps.lastEventId`): it gets what it missed and
 * nothing twice. The gateway keeps nothing between requests.
 */
export function registerAgUiRoutes(
  app: FastifyInstance,
  deps: GatewayDeps,
  access: GatewayAccess,
  openStream: (token: GatewayToken) => () => void,
) {
  app.post('/v1/ag-ui', async (request, reply) => {
    const token = access.authenticate(request);
    const input = parseBody(RunAgentInputSchema, request.body);
    const resumeFrom = explicitCursor(request, input);
    const close = openStream(token);
    let watch: EarlyWatch | undefined;
    let state: ReturnType<AgUiLookups['snapshot']> | undefined;
    try {
      const intake = await deliverRunInput(deps, access, token, input, (before) => {
        watch = new EarlyWatch(deps.agent, input.threadId, before, deps.eventPollMs);
        // Read while the input is delivered, so the stream's first events wait for nothing.
        state = agUiLookups(deps.agent, input.threadId).snapshot();
        state.catch(() => undefined);
      });
      const start = resumeFrom ?? stateCursor(input, intake) ?? { seq: intake.afterSeq };
      await streamEvents(reply, {
        check: () => deps.tokens.recheck(token),
        ...(token.expiresAt !== undefined ? { checkAt: Date.parse(token.expiresAt) } : {}),
        keepAliveMs: deps.keepAliveMs ?? 15_000,
        errorFrame: (status, message) =>
          agUiFrame({ type: 'RUN_ERROR', message, code: String(status) }, String(start.seq)),
        produce: (write, stop) =>
          produceRun(deps, input, intake, start, { watch: watch!, state: state! }, write, stop),
      });
    } finally {
      watch?.close();
      close();
    }
  });
}

/** The cursor the page reconnects from: the SSE `Last-Event-ID` header, or the input's `forwardedProps.lastEventId`. */
function explicitCursor(request: FastifyRequest, input: RunAgentInput): AgUiCursor | undefined {
  const header = request.headers['last-event-id'];
  const text = typeof header === 'string' ? header : input.forwardedProps?.lastEventId;
  return text === undefined ? undefined : parseCursor(text);
}

/**
 * Where a page that answers (a decision, its tool's result) without a new message left off: the
 * `lastEventId` of the state the gateway last sent it, which the page sends back with every input.
 */
function stateCursor(input: RunAgentInput, intake: AgUiIntake): AgUiCursor | undefined {
  if (intake.afterRun >= 0) return undefined;
  const state = input.state as { lastEventId?: unknown } | undefined;
  if (typeof state?.lastEventId !== 'string') return undefined;
  try {
    const cursor = parseCursor(state.lastEventId);
    return cursor.seq <= intake.afterSeq ? cursor : undefined;
  } catch {
    return undefined;
  }
}

async function produceRun(
  deps: GatewayDeps,
  input: RunAgentInput,
  intake: AgUiIntake,
  start: AgUiCursor,
  { watch, state }: { watch: EarlyWatch; state: ReturnType<AgUiLookups['snapshot']> },
  write: (chunk: string) => void,
  stop: AbortSignal,
): Promise<void> {
  const { agent } = deps;
  const id = input.threadId;
  const translator = new AgUiTranslator(
    { threadId: id, runId: input.runId },
    start,
    agUiLookups(agent, id),
    (event, cursor) => write(agUiFrame(event, cursor)),
    { clientToolNames: new Set((input.tools ?? []).map((tool) => tool.name)), afterRun: intake.afterRun },
  );
  translator.begin(state);
  // What the page missed before this input, then: does the conversation wait for the page still?
  const missed = start.seq < intake.before ? await agent.events(id, start.seq) : [];
  for (const event of missed) {
    if (event.seq > intake.before) break;
    if (await translator.handle(event)) return;
  }
  if (await translator.endIfWaiting(intake.stillWaiting)) return;
  if (!intake.delivered) {
    // A page that only reconnects to a conversation with nothing going on has seen it all.
    const status = await agent.status(id);
    if (status.status !== 'running' && status.lastSeq <= intake.before) return translator.endIdle();
  }
  // Then what comes: the watch opened before the input was delivered.
  for await (const event of watch.follow(stop)) if (await translator.handle(event)) return;
  if (!stop.aborted) await translator.endIdle();
}
