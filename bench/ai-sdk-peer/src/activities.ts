import { Context } from '@temporalio/activity';
import { preciseNow } from '../../support/clock';
import { reportTool } from '../../support/protocol';

/**
 * The peer's tools, as one activity: `noop` answers at once, `sleep` waits `ms` (500 by default),
 * telling the runner when it starts (for the peer crash bench).
 */
export async function runTool(name: string, input: { ms?: number }): Promise<string> {
  if (name === 'sleep') {
    const { cancellationSignal: signal, info } = Context.current();
    reportTool({ event: 'start', tool: name, toolCallId: info.activityId, at: preciseNow() });
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
