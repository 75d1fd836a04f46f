import { ExecSecurityModeSchema } from '../shared/exec-security';
import { DEFAULT_SANDBOX_SETTINGS, type SandboxSettings } from '../tools/exec/bubblewrap';
import { ENV_NAME_PATTERN } from '../tools/exec/child-environment';
import { DEFAULT_EXEC_LIMITS, type ExecLimitSettings } from '../tools/exec/exec-limits';
import { RUN_MARK_VARIABLE } from '../tools/exec/process-tree';
import type { ExecPolicySettings } from '../tools/exec/exec-policy';

/**
 * AGENT_EXEC_SECURITY (`full`, the default, `sandbox` or `safe-bin`), AGENT_EXEC_SAFE_BINS
 * (comma-separated program names replacing the default safe bins) and the sandbox's settings. An
 * unknown mode is an error, never a silent `full`.
 */
export function execPolicyFromEnv(env: NodeJS.ProcessEnv): ExecPolicySettings {
  const mode = env.AGENT_EXEC_SECURITY?.trim();
  const parsed = ExecSecurityModeSchema.safeParse(mode || 'full');
  if (!parsed.success)
    throw new Error(`AGENT_EXEC_SECURITY must be full, sandbox or safe-bin, not ${JSON.stringify(mode)}`);
  const bins = (env.AGENT_EXEC_SAFE_BINS ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  for (const name of bins) {
    if (!/^[A-Za-z0-9._+-]+$/.test(name)) {
      throw new Error(`AGENT_EXEC_SAFE_BINS names programs, not paths or patterns: ${JSON.stringify(name)}`);
    }
  }
  return { security: parsed.data, ...(bins.length ? { safeBins: bins } : {}), sandbox: sandboxFromEnv(env) };
}

/**
 * AGENT_EXEC_SANDBOX_NETWORK (`1`/`true` lets sandboxed commands reach the network) and the limits
 * per command: AGENT_EXEC_SANDBOX_MEMORY_MB, _CPU_S, _PROCESSES, _FILE_MB, _TMP_MB (whole numbers).
 */
export function sandboxFromEnv(env: NodeJS.ProcessEnv): SandboxSettings {
  const network = (env.AGENT_EXEC_SANDBOX_NETWORK ?? '').trim().toLowerCase();
  if (!['', '0', '1', 'true', 'false'].includes(network))
    throw new Error(`AGENT_EXEC_SANDBOX_NETWORK must be 1/true or 0/false, not ${JSON.stringify(network)}`);
  return {
    network: network === '1' || network === 'true',
    memoryMb: whole(env, 'AGENT_EXEC_SANDBOX_MEMORY_MB', DEFAULT_SANDBOX_SETTINGS.memoryMb),
    cpuSeconds: whole(env, 'AGENT_EXEC_SANDBOX_CPU_S', DEFAULT_SANDBOX_SETTINGS.cpuSeconds),
    processes: whole(env, 'AGENT_EXEC_SANDBOX_PROCESSES', DEFAULT_SANDBOX_SETTINGS.processes),
    fileMb: whole(env, 'AGENT_EXEC_SANDBOX_FILE_MB', DEFAULT_SANDBOX_SETTINGS.fileMb),
    tmpMb: whole(env, 'AGENT_EXEC_SANDBOX_TMP_MB', DEFAULT_SANDBOX_SETTINGS.tmpMb),
  };
}

/**
 * What bounds every command in every mode: AGENT_EXEC_CGROUP (`auto`, the default; `off`; or the
 * absolute path of a cgroup to make the worker's command cgroups under), AGENT_EXEC_PROCESSES
 * (tasks per command in `full` and `safe-bin` mode), AGENT_EXEC_DISK_MB and
 * AGENT_EXEC_DISK_RESERVE_MB (`0` turns either off).
 */
export function execLimitsFromEnv(env: NodeJS.ProcessEnv): ExecLimitSettings {
  const cgroup = env.AGENT_EXEC_CGROUP?.trim() || DEFAULT_EXEC_LIMITS.cgroup;
  if (cgroup !== 'auto' && cgroup !== 'off' && !cgroup.startsWith('/'))
    throw new Error(
      `AGENT_EXEC_CGROUP must be auto, off or the absolute path of a cgroup, not ${JSON.stringify(cgroup)}`,
    );
  return {
    cgroup,
    processes: whole(env, 'AGENT_EXEC_PROCESSES', DEFAULT_EXEC_LIMITS.processes),
    disk: {
      quotaMb: whole(env, 'AGENT_EXEC_DISK_MB', DEFAULT_EXEC_LIMITS.disk.quotaMb, 0),
      reserveMb: whole(env, 'AGENT_EXEC_DISK_RESERVE_MB', DEFAULT_EXEC_LIMITS.disk.reserveMb, 0),
    },
  };
}

function whole(env: NodeJS.ProcessEnv, name: string, fallback: number, least = 1): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < least)
    throw new Error(`${name} must be a whole number ≥ ${least}, not ${JSON.stringify(raw)}`);
  return value;
}

/**
 * AGENT_EXEC_ENV_PASS: comma-separated exact names of worker environment variables that commands
 * (`exec`, background processes) may see beyond the base ones. Empty by default: a command sees no
 * secret the worker holds unless the operator names it here.
 */
export function execEnvPassFromEnv(env: NodeJS.ProcessEnv): string[] {
  const names = (env.AGENT_EXEC_ENV_PASS ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  for (const name of names) {
    if (!ENV_NAME_PATTERN.test(name)) {
      throw new Error(
        `AGENT_EXEC_ENV_PASS names environment variables exactly (letters, digits, underscore), not patterns: ${JSON.stringify(name)}`,
      );
    }
    if (name === RUN_MARK_VARIABLE) {
      throw new Error(
        `AGENT_EXEC_ENV_PASS cannot pass ${RUN_MARK_VARIABLE}: the worker sets it for every command`,
      );
    }
  }
  return names;
}
