import { ExecSecurityModeSchema } from '../shared/exec-security';
import { DEFAULT_SANDBOX_SETTINGS, type SandboxSettings } from '../tools/exec/bubblewrap';
import { ENV_NAME_PATTERN } from '../tools/exec/child-environment';
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
 * per command: AGENT_EXEC_SANDBOX_MEMORY_MB, _CPU_S, _PROCESSES, _FILE_MB (whole numbers).
 */
export function sandboxFromEnv(env: NodeJS.ProcessEnv): SandboxSettings {
  const whole = (name: string, fallback: number) => {
    const raw = env[name]?.trim();
    if (!raw) return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 1)
      throw new Error(`${name} must be a whole number ≥ 1, not ${JSON.stringify(raw)}`);
    return value;
  };
  const network = (env.AGENT_EXEC_SANDBOX_NETWORK ?? '').trim().toLowerCase();
  if (!['', '0', '1', 'true', 'false'].includes(network))
    throw new Error(`AGENT_EXEC_SANDBOX_NETWORK must be 1/true or 0/false, not ${JSON.stringify(network)}`);
  return {
    network: network === '1' || network === 'true',
    memoryMb: whole('AGENT_EXEC_SANDBOX_MEMORY_MB', DEFAULT_SANDBOX_SETTINGS.memoryMb),
    cpuSeconds: whole('AGENT_EXEC_SANDBOX_CPU_S', DEFAULT_SANDBOX_SETTINGS.cpuSeconds),
    processes: whole('AGENT_EXEC_SANDBOX_PROCESSES', DEFAULT_SANDBOX_SETTINGS.processes),
    fileMb: whole('AGENT_EXEC_SANDBOX_FILE_MB', DEFAULT_SANDBOX_SETTINGS.fileMb),
  };
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
