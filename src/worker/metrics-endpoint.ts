import { METRIC } from '../shared/agent-metrics';

/** Where a worker serves Prometheus metrics (`/metrics`), as `host:port`. */
export interface MetricsEndpoint {
  host: string;
  port: number;
}

/** Bucket bounds (ms) finer than the exporter's default (50 ms to 10 s) where durations span minutes or days. */
const SECONDS_TO_MINUTES = [10, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000, 300_000];
const HISTOGRAM_BUCKETS: Record<string, number[]> = {
  [METRIC.toolDuration]: SECONDS_TO_MINUTES,
  [METRIC.modelLatency]: SECONDS_TO_MINUTES,
  [METRIC.modelTimeToFirstToken]: [50, 100, 250, 500, 1_000, 2_000, 5_000, 10_000, 30_000],
  [METRIC.approvalWait]: [1_000, 10_000, 60_000, 300_000, 900_000, 3_600_000, 14_400_000, 86_400_000],
};

/**
 * The Temporal runtime's telemetry option for a Prometheus endpoint: the SDK's own metrics and the
 * runtime's (tool, model and approval series) on one `/metrics`, counters ending in `_total`.
 */
export function prometheusTelemetry(endpoint: MetricsEndpoint) {
  return {
    prometheus: {
      bindAddress: `${endpoint.host}:${endpoint.port}`,
      countersTotalSuffix: true,
      histogramBucketOverrides: HISTOGRAM_BUCKETS,
    },
  };
}

/**
 * `--metrics-port PORT` on the command line, else DURABLE_AGENT_METRICS_PORT; bound to
 * DURABLE_AGENT_METRICS_HOST (default 127.0.0.1: metrics name tools and models, so they are not for
 * the network unless the operator says so). Undefined when neither asks for metrics.
 */
export function metricsEndpointFrom(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): MetricsEndpoint | undefined {
  const flagAt = args.findIndex((arg) => arg === '--metrics-port' || arg.startsWith('--metrics-port='));
  const flag =
    flagAt === -1 ? undefined : args[flagAt]!.includes('=') ? args[flagAt]!.split('=')[1] : args[flagAt + 1];
  const text = flag ?? env.DURABLE_AGENT_METRICS_PORT;
  if (text === undefined || text === '') return undefined;
  const port = Number(text);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) {
    throw new Error(`the metrics port is a number from 1 to 65535, not ${JSON.stringify(text)}`);
  }
  return { host: env.DURABLE_AGENT_METRICS_HOST || '127.0.0.1', port };
}
