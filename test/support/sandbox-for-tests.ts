import { sandboxAvailability } from '../../src/tools/exec/bubblewrap';
import { inCi } from './in-ci';

/**
 * Whether tests that need bubblewrap (`sandbox` mode) can run here. On a developer's machine without
 * it they are skipped, saying why; in CI a missing or unusable bubblewrap fails the run, so a missing
 * package is never mistaken for a passing sandbox. `what` names the tests, for the message.
 */
export function sandboxForTests(what: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const available = sandboxAvailability();
  if (available.ok) return true;
  if (inCi(env)) {
    throw new Error(`${what} need bubblewrap, and a CI run must run them: ${available.reason}`);
  }
  console.warn(`${what} skipped: ${available.reason} (in CI this fails the run)`);
  return false;
}
