import { type Client, ServiceError } from '@temporalio/client';
import { AgentClient } from '../../src/client/agent-client';
import type { AgentEvent } from '../../src/shared/events';

export type FakeStatus = 'RUNNING' | 'COMPLETED' | 'FAILED';

/** gRPC's code for a server that did not answer the call. */
export const GRPC_UNAVAILABLE = 14;

/** A call the server did not answer (gRPC `code`), as the Temporal client throws it. */
export function unansweredCall(code: number, message = 'Failed to describe workflow'): ServiceError {
  const grpc = Object.assign(new Error(`${code} no connection`), {
    code,
    details: 'no connection',
    metadata: {},
  });
  return new ServiceError(message, { cause: grpc });
}

/**
 * One conversation as Temporal shows it to a client: its events (answered by the `events` query
 * while `answering`), its status and result (answered without a worker, as describe and result are),
 * and the signals it is sent.
 */
export class FakeConversation {
  events: AgentEvent[] = [];
  status: FakeStatus = 'RUNNING';
  /** False: no worker answers queries (they fail as the server fails them). */
  answering = true;
  /** How many of the next describe() calls the server does not answer (gRPC UNAVAILABLE). */
  unansweredDescribes = 0;
  result: unknown = undefined;
  failure: string | undefined;
  queries = 0;
  describes = 0;
  /** Every user message signalled (plain, or with a start), in order. */
  readonly signalled: unknown[] = [];
  /** How many of the next signals (plain, or with a start) the server does not answer (gRPC UNAVAILABLE). */
  unansweredSignals = 0;
  /** What the `messageReceipt` query answers, by message id. */
  readonly receipts = new Map<string, unknown>();

  /** A signal, unless the server is set not to answer it; one it does not answer is not delivered. */
  private deliver(message: unknown): void {
    if (this.unansweredSignals > 0) {
      this.unansweredSignals--;
      throw unansweredCall(GRPC_UNAVAILABLE, 'Failed to signal workflow');
    }
    this.signalled.push(message);
  }

  readonly handle = {
    workflowId: 'conv-1',
    client: {
      withAbortSignal: <T>(_signal: AbortSignal, call: () => Promise<T>) => call(),
      options: { dataConverter: { payloadCodecs: [] } },
    },
    query: async (definition: { name: string }, ...args: unknown[]) => {
      this.queries++;
      if (!this.answering) throw new ServiceError('Failed to query Workflow');
      if (definition.name === 'events') return this.events.filter((event) => event.seq > (args[0] as number));
      if (definition.name === 'messageReceipt') return this.receipts.get(args[0] as string) ?? null;
      if (definition.name === 'status') {
        return { lastSeq: this.events.at(-1)?.seq ?? 0, runCount: this.events.at(-1)?.run ?? 0 };
      }
      throw new Error(`no query ${definition.name}`);
    },
    describe: async () => {
      this.describes++;
      if (this.unansweredDescribes > 0) {
        this.unansweredDescribes--;
        throw unansweredCall(GRPC_UNAVAILABLE);
      }
      return {
        status: { name: this.status },
        raw: { pendingActivities: [] },
        runId: 'run-a',
        startTime: new Date(1_000),
        ...(this.status === 'RUNNING' ? {} : { closeTime: new Date(9_000) }),
        taskQueue: 'queue',
        type: 'conversation',
      };
    },
    signal: async (_definition: unknown, message: unknown) => this.deliver(message),
    result: async () => this.result,
  };

  readonly client = {
    workflow: {
      getHandle: () => this.handle,
      signalWithStart: async (_type: string, options: { signalArgs: unknown[] }) => {
        this.deliver(options.signalArgs[0]);
        return this.handle;
      },
    },
    options: { namespace: 'default' },
    workflowService: {
      getWorkflowExecutionHistoryReverse: async () => ({
        history: {
          events: this.failure
            ? [{ workflowExecutionFailedEventAttributes: { failure: { message: this.failure } } }]
            : [],
        },
      }),
    },
  } as unknown as Client;

  readonly agent = new AgentClient(this.client, 'queue', { subscribe: () => () => undefined });
}
