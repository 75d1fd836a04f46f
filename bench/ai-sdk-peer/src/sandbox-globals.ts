import structuredClonePolyfill from '@ungap/structured-clone';
import { Headers as HeadersPolyfill } from 'headers-polyfill';

/**
 * The AI SDK's polyfills (installed first in the bundle by the AiSdkPlugin) set `Headers` and
 * `structuredClone` only where they are missing when the bundle loads. With the worker's shared V8 context (reuseV8Context), once it
 * holds a few hundred conversations some workflows lack them later and their workflow tasks fail
 * for ever ("Headers is not defined", "structuredClone is not defined" inside `generateText`).
 * Installing them again before each `generateText` keeps the peer running; it costs nothing measurable.
 */
export function ensureSandboxGlobals(): void {
  const globals = globalThis as { Headers?: unknown; structuredClone?: unknown };
  globals.Headers ??= HeadersPolyfill;
  globals.structuredClone ??= structuredClonePolyfill;
}
