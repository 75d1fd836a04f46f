import { loadClientConfig, loadClientConfigProfile } from '@temporalio/envconfig';
import { type ConnectionSettings, ConnectionSettingsSchema } from '../shared/connection-settings';
import { withStandardNames } from './deprecated-temporal-names';
import { type TemporalConfigFile, findTemporalConfigFile } from './temporal-config-file';

/** Variables Temporal's client configuration reads besides the TEMPORAL_* ones: where the default file is. */
const CONFIG_DIR_VARIABLES = ['HOME', 'XDG_CONFIG_HOME', 'APPDATA'];

/**
 * How to reach Temporal, read as the `temporal` CLI and Temporal's SDKs read it: the profile named
 * by TEMPORAL_PROFILE (else `default`) of the client configuration file (TEMPORAL_CONFIG_FILE, else
 * `~/.config/temporalio/temporal.toml`), overridden by the standard variables (TEMPORAL_ADDRESS,
 * TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS, TEMPORAL_TLS_CLIENT_CERT_PATH, …). Besides:
 * AGENT_TASK_QUEUE, DURABLE_AGENT_SERVER_WAIT_MS, and durable-agent's old TLS names, which still
 * work and say once through `warn` that they are deprecated. An empty variable counts as unset.
 */
export function connectionSettingsFromEnv(
  env: NodeJS.ProcessEnv,
  warn: (line: string) => void = toStderr,
): ConnectionSettings {
  const temporalEnv = withStandardNames(temporalVariables(env), warn);
  if (temporalEnv.TEMPORAL_TLS_DISABLE_HOST_VERIFICATION) {
    warn("TEMPORAL_TLS_DISABLE_HOST_VERIFICATION is not supported by Temporal's TypeScript SDK: ignored");
  }
  const file = findTemporalConfigFile(temporalEnv);
  const profileName = temporalEnv.TEMPORAL_PROFILE;
  if (profileName && !file) {
    throw new Error(
      `TEMPORAL_PROFILE (--profile) names profile '${profileName}', but there is no Temporal client configuration file: ` +
        'set TEMPORAL_CONFIG_FILE (--config-file), or put it in ~/.config/temporalio/temporal.toml',
    );
  }
  const profile = loadProfile(file, profileName, definedOnly(temporalEnv));
  return ConnectionSettingsSchema.parse({
    address: profile.address || undefined,
    namespace: profile.namespace || undefined,
    taskQueue: text(env.AGENT_TASK_QUEUE),
    apiKey: profile.apiKey || undefined,
    tls: profile.tls,
    grpcMeta: profile.grpcMeta,
    source: file ? `profile '${profileName ?? 'default'}' of ${file.path}` : 'the environment',
    serverWaitMs: wholeNumber(env, 'DURABLE_AGENT_SERVER_WAIT_MS'),
  });
}

function toStderr(line: string): void {
  process.stderr.write(`${line}\n`);
}

function loadProfile(
  file: TemporalConfigFile | undefined,
  profileName: string | undefined,
  overrideEnvVars: Record<string, string>,
): ReturnType<typeof loadClientConfigProfile> {
  try {
    return loadClientConfigProfile({
      ...(profileName ? { profile: profileName } : {}),
      ...(file ? { configSource: { data: file.text } } : { disableFile: true }),
      overrideEnvVars,
    });
  } catch (error) {
    if (!file) throw error;
    const message = (error as Error).message;
    if (profileName && /not found/.test(message)) {
      const known = Object.keys(loadClientConfig({ configSource: { data: file.text } }).profiles);
      throw new Error(
        `profile '${profileName}' (TEMPORAL_PROFILE, --profile) is not in ${file.path}` +
          (known.length
            ? `, which has ${known.map((name) => `'${name}'`).join(', ')}`
            : ', which has no profiles'),
      );
    }
    throw new Error(`${file.path}: ${message}`, { cause: error });
  }
}

/**
 * The variables Temporal's client configuration reads, empty ones dropped (a compose file's
 * `TEMPORAL_ADDRESS: ${TEMPORAL_ADDRESS:-}` means unset), TEMPORAL_TLS read as a yes or no.
 * TEMPORAL_GRPC_META_* keep an empty value: it removes a header the profile sets.
 */
function temporalVariables(env: NodeJS.ProcessEnv): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (!name.startsWith('TEMPORAL_') && !CONFIG_DIR_VARIABLES.includes(name)) continue;
    if (value === '' && !name.startsWith('TEMPORAL_GRPC_META_')) continue;
    out[name] = value;
  }
  if (out.TEMPORAL_TLS !== undefined) out.TEMPORAL_TLS = String(yesOrNo(out.TEMPORAL_TLS, 'TEMPORAL_TLS'));
  return out;
}

function yesOrNo(value: string, name: string): boolean {
  if (/^(1|true|yes|on)$/i.test(value)) return true;
  if (/^(0|false|no|off)$/i.test(value)) return false;
  throw new Error(`${name} takes true or false, got ${value}`);
}

function definedOnly(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}

const text = (value: string | undefined) => (value === undefined || value === '' ? undefined : value);

function wholeNumber(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const value = text(env[name]);
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new Error(`${name} must be a whole number of milliseconds, got ${value}`);
  return Number(value);
}
