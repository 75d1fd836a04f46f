/** durable-agent's own names for Temporal's TLS settings, before it read Temporal's standard ones. */
export const DEPRECATED_TEMPORAL_NAMES: Readonly<Record<string, string>> = {
  TEMPORAL_TLS_CERT: 'TEMPORAL_TLS_CLIENT_CERT_PATH',
  TEMPORAL_TLS_KEY: 'TEMPORAL_TLS_CLIENT_KEY_PATH',
  TEMPORAL_TLS_CA: 'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
};

/** Names already warned about, by whom: a command resolves its settings more than once, and says so once. */
const warnedBy = new WeakMap<(line: string) => void, Set<string>>();

/**
 * `env` with each deprecated name that is set copied to its standard name (the standard one wins
 * when both are set), saying so once per name through each `warn`.
 */
export function withStandardNames(
  env: Record<string, string | undefined>,
  warn: (line: string) => void,
): Record<string, string | undefined> {
  const out = { ...env };
  const warned = warnedBy.get(warn) ?? new Set<string>();
  warnedBy.set(warn, warned);
  for (const [old, standard] of Object.entries(DEPRECATED_TEMPORAL_NAMES)) {
    const value = env[old];
    if (!value) continue;
    const ignored = Boolean(env[standard]) && env[standard] !== value;
    if (!ignored) out[standard] = value;
    if (warned.has(old)) continue;
    warned.add(old);
    warn(
      ignored
        ? `${old} is deprecated and ignored: ${standard} is set`
        : `${old} is deprecated: use ${standard}, Temporal's standard name (read for now)`,
    );
  }
  return out;
}
