import { sandboxAvailability } from '../../src/tools/exec/bubblewrap';

/** Whether this is a CI run: `CI` set to anything but empty, `0` or `false`, as CI services set it. */
export function inCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env.CI?.trim().toLowerCase();
  return value !== undefined && value !== '' && value !== '0' && value !== 'false';
}

/**
 * Whether tests that need bubblewrap (`sandbox` mode) can run here. On a developer's machine without
 * it they are skipped, saying why; in CI a missing or unusable bubblewrap fails the run, so a missing
 * package is never mistaken for a passing sandbox. `what` names the tests, for the message.
 */
export function sandboxForTests(what: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const available = sandboxAvailability();
  if (available.ok) return true;
  if (inCi(env)) {
    throw new Error(`${what} need bubblewrap, and CI must run them (CI=${env.CI}): ${available.reason}`);
  }
  console.warn(`${what} skipped: ${available.reason} (in CI this fails the run)`);
  return false;
}
