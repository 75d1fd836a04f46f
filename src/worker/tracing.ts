import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Resource, envDetectorSync } from '@opentelemetry/resources';
import type { WorkflowClientInterceptor } from '@temporalio/client';

/** Where spans go and what they say about the process; shared by the worker's and the client's interceptors. */
export interface Tracing {
  resource: Resource;
  spanProcessor: SpanProcessor;
  /** Sends the spans still buffered; call before exiting. */
  shutdown(): Promise<void>;
}

/**
 * OpenTelemetry tracing from the standard variables: on when OTEL_EXPORTER_OTLP_ENDPOINT (or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set, unless OTEL_TRACES_EXPORTER=none or OTEL_SDK_DISABLED=true.
 * Spans are sent over OTLP/HTTP in batches (OTEL_BSP_* tune them); OTEL_SERVICE_NAME and
 * OTEL_RESOURCE_ATTRIBUTES name the process. Registers the global tracer provider, so spans made
 * with `@opentelemetry/api` (the model call's) join the same traces.
 */
export async function tracingFromEnv(env: NodeJS.ProcessEnv): Promise<Tracing | undefined> {
  if (env.OTEL_SDK_DISABLED === 'true' || env.OTEL_TRACES_EXPORTER === 'none') return undefined;
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT && !env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return undefined;
  const [{ OTLPTraceExporter }, { BatchSpanProcessor }] = await Promise.all([
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/sdk-trace-base'),
  ]);
  return startTracing(new BatchSpanProcessor(new OTLPTraceExporter()), env);
}

/** Tracing into `spanProcessor` (tests pass an in-memory one). */
export async function startTracing(spanProcessor: SpanProcessor, env: NodeJS.ProcessEnv): Promise<Tracing> {
  const { NodeTracerProvider } = await import('@opentelemetry/sdk-trace-node');
  const resource = new Resource({ 'service.name': env.OTEL_SERVICE_NAME || 'durable-agent' }).merge(
    envDetectorSync.detect(),
  );
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  provider.register();
  return { resource, spanProcessor, shutdown: () => provider.shutdown() };
}

/** The client interceptor that starts a trace for each start, signal, update and query it sends. */
export async function tracingClientInterceptors(): Promise<WorkflowClientInterceptor[]> {
  const { OpenTelemetryWorkflowClientInterceptor } = await import('@temporalio/interceptors-opentelemetry');
  return [new OpenTelemetryWorkflowClientInterceptor()];
}
