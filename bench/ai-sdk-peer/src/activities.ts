import { Context } from '@temporalio/activity';

/** The peer's tools, as one activity: `noop` answers at once, `sleep` waits `ms` (500 by default). */
export async function runTool(name: string, input: { ms?: number }): Promise<string> {
  if (name === 'sleep') {
    const signal = Context.current().cancellationSignal;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, input.ms ?? 500);
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
  return 'ok';
}
