/**
 * Whether this is a CI run: `CI` set to anything but empty, `0` or `false`, as CI services set it.
 * The one rule for every test that needs a part of the system (a program, a server, a browser): where
 * it is missing, a developer's run skips the test or stands something in, saying why; a CI run fails.
 */
export function inCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env.CI?.trim().toLowerCase();
  return value !== undefined && value !== '' && value !== '0' && value !== 'false';
}
