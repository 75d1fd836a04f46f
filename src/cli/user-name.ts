import os from 'node:os';

/** The person at this terminal: who approvals and aborts are recorded as made by, unless --by says otherwise. */
export function currentUserName(env: NodeJS.ProcessEnv = process.env): string {
  try {
    const { username } = os.userInfo();
    if (username) return username;
  } catch {
    // No passwd entry for this uid (some containers): fall back to the environment.
  }
  return env.USER || env.USERNAME || 'unknown';
}
