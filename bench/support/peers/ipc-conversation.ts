import { type Directive, directiveText } from '../model-server';
import type { WorkerProcess } from '../worker-process';
import type { PeerConversation } from './engine';

const TURN_TIMEOUT_MS = 120_000;

/**
 * A conversation of an engine driven from inside its service process (DBOS, LangGraph): each
 * turn is a call to whichever service runs now, resolved when the service says the turn is done.
 */
export function ipcConversation(id: string, service: () => WorkerProcess | undefined): PeerConversation {
  let turns = 0;
  return {
    id,
    get turns() {
      return turns;
    },
    async runTurn(directive: Omit<Directive, 'c' | 't'> = { tool: 'noop' }) {
      const text = directiveText({ c: id, t: ++turns, ...directive });
      const running = service();
      if (!running) throw new Error(`no service runs ${id}`);
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`turn ${turns} of ${id} not done in ${TURN_TIMEOUT_MS / 1_000} s`)),
          TURN_TIMEOUT_MS,
        );
      });
      try {
        await Promise.race([running.call({ method: 'turn', conversationId: id, text }), timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
