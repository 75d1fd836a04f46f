import structuredClonePolyfill from '@ungap/structured-clone';
import { Headers as HeadersPolyfill } from 'headers-polyfill';

/**
 * `@temporalio/ai-sdk/lib/load-polyfills` installs `Headers` and `structuredClone` only where they
 * are missing when the module loads. With the worker's shared V8 context (reuseV8Context), once it
 * holds a few hundred conversations some workflows lack them later and their workflow tasks fail
 * for ever ("Headers is not defined", "structuredClone is not defined" inside `generateText`).
 * Installing them again before each `generateText` keeps the peer running; it costs nothing measurable.
 */
export function ensureSandboxGlobals(): void {
  const globals = globalThis as { Headers?: unknown; structuredClone?: unknown };
  globals.Headers ??= HeadersPolyfill;
  globals.structuredClone ??= structuredClonePolyfill;
}
