import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { AssistantMessage } from '../../shared/messages';
import type { ModelWire } from './model-wire';

const tracer = trace.getTracer('durable-agent');

/**
 * A model call as an OpenTelemetry span with the GenAI semantic conventions' attributes (operation,
 * the provider the wire calls and its server, requested and answering model, tokens, finish reason,
 * error type). It nests under the activity's span when tracing is on, and costs nothing when it is
 * off (no tracer provider).
 */
export function withModelCallSpan(
  wire: Pick<ModelWire, 'providerName' | 'server'>,
  model: string,
  call: () => Promise<AssistantMessage>,
): Promise<AssistantMessage> {
  return tracer.startActiveSpan(
    `chat ${model}`,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': wire.providerName,
        'gen_ai.request.model': model,
        ...(wire.server ? { 'server.address': wire.server.address } : {}),
        ...(wire.server?.port !== undefined ? { 'server.port': wire.server.port } : {}),
      },
    },
    async (span) => {
      try {
        const reply = await call();
        span.setAttributes({
          ...(reply.model ? { 'gen_ai.response.model': reply.model } : {}),
          ...(reply.usage
            ? {
                'gen_ai.usage.input_tokens': reply.usage.inputTokens,
                'gen_ai.usage.output_tokens': reply.usage.outputTokens,
              }
            : {}),
          'gen_ai.response.finish_reasons': [reply.stopReason],
        });
        return reply;
      } catch (error) {
        span.setAttribute(
          'error.type',
          (error as { type?: string }).type ?? (error as Error).name ?? 'Error',
        );
        span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
        throw error;
      } finally {
        span.end();
      }
    },
  );
}
