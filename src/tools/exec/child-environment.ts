/**
 * The environment a command the model runs starts with. The worker's own environment holds the
 * model API key, Temporal and blob store credentials and the RAP secret; a command that prints its
 * environment must find none of them. So a child gets only the variables a shell needs to behave
 * (search path, home, locale, terminal, time zone, user, temporary directory), plus the exact names
 * the operator chose to pass, and never anything by default.
 *
 * This keeps secrets out of what a command is given. It does not stop a command that reads the
 * worker's own start-up environment from /proc/<worker pid>/environ, readable by the same user:
 * only a sandbox with a process namespace of its own, or another user, closes that.
 */
const BASE_NAMES: ReadonlySet<string> = new Set([
  'PATH',
  'HOME',
  'LANG',
  'TERM',
  'TZ',
  'USER',
  'TMPDIR',
  // The locale categories glibc and POSIX define; any other LC_ name is not a locale and could hold anything.
  'LC_ALL',
  'LC_ADDRESS',
  'LC_COLLATE',
  'LC_CTYPE',
  'LC_IDENTIFICATION',
  'LC_MEASUREMENT',
  'LC_MESSAGES',
  'LC_MONETARY',
  'LC_NAME',
  'LC_NUMERIC',
  'LC_PAPER',
  'LC_TELEPHONE',
  'LC_TIME',
]);

/** A portable environment variable name: what AGENT_EXEC_ENV_PASS may list. */
export const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The variables of `source` a child may see: the base names and the names in `pass`, those present
 * only. Pure: the caller decides which environment is the source (the worker's, at its edge).
 */
export function childEnvironment(
  source: Readonly<Record<string, string | undefined>>,
  pass: readonly string[] = [],
): Record<string, string> {
  const passed = new Set(pass);
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(source)) {
    if (value !== undefined && (BASE_NAMES.has(name) || passed.has(name))) env[name] = value;
  }
  return env;
}
