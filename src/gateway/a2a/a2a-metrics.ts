import { type MetricMeter, noopMetricMeter } from '@temporalio/common';

/**
 * The gateway's A2A series, recorded through a Temporal metric meter (the gateway's Prometheus
 * endpoint with `--metrics-port`, where counters end in `_total`).
 */
export const A2A_METRIC = {
  /** JSON-RPC requests by `method` and `outcome` (`ok`, or the JSON-RPC error code answered). */
  requests: 'durable_agent_a2a_requests',
  /** A2A streams (SendStreamingMessage, SubscribeToTask) open on this gateway now. */
  streams: 'durable_agent_a2a_streams',
  /** Messages taken by `kind`: `task` (a new task), `decision`, `steer`. A retry counts again; it runs once. */
  messages: 'durable_agent_a2a_messages',
} as const;

/** The methods named as they are; anything else a caller sends is `unknown`, so labels stay few. */
const METHODS = new Set([
  'SendMessage',
  'SendStreamingMessage',
  'GetTask',
  'ListTasks',
  'CancelTask',
  'SubscribeToTask',
  'CreateTaskPushNotificationConfig',
  'GetTaskPushNotificationConfig',
  'ListTaskPushNotificationConfigs',
  'DeleteTaskPushNotificationConfig',
  'GetExtendedAgentCard',
]);

export type A2AMessageKind = 'task' | 'decision' | 'steer';

export class A2AMetrics {
  private open = 0;

  constructor(private readonly meter: MetricMeter = noopMetricMeter) {}

  /** A request answered: `method` as the caller named it (undefined when the body was no JSON-RPC request). */
  request(method: string | undefined, code: number | undefined): void {
    const label = method === undefined ? 'invalid' : METHODS.has(method) ? method : 'unknown';
    this.meter
      .createCounter(A2A_METRIC.requests, 'requests')
      .add(1, { method: label, outcome: code === undefined ? 'ok' : String(code) });
  }

  /** A stream opened; the function returned closes it. */
  streamOpened(): () => void {
    this.setStreams(1);
    let closed = false;
    return () => {
      if (closed) return;
      closed = true;
      this.setStreams(-1);
    };
  }

  messageTaken(kind: A2AMessageKind): void {
    this.meter.createCounter(A2A_METRIC.messages, 'messages').add(1, { kind });
  }

  private setStreams(change: number): void {
    this.open += change;
    this.meter.createGauge(A2A_METRIC.streams, 'int', 'streams').set(this.open);
  }
}
