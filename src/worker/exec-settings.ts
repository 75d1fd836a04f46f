import { ExecSecurityModeSchema } from '../shared/exec-security';
import { ENV_NAME_PATTERN } from '../tools/child-environment';
import { RUN_MARK_VARIABLE } from '../tools/process-tree';
import type { ExecPolicySettings } from '../tools/exec-policy';

/**
 * AGENT_EXEC_SECURITY (`full`, the default, or `safe-bin`) and AGENT_EXEC_SAFE_BINS (comma-separated
 * program names replacing the default safe bins). An unknown mode is an error, never a silent `full`.
 */
export function execPolicyFromEnv(env: NodeJS.ProcessEnv): ExecPolicySettings {
  const mode = env.AGENT_EXEC_SECURITY?.trim();
  const parsed = ExecSecurityModeSchema.safeParse(mode || 'full');
  if (!parsed.success)
    throw new Error(`AGENT_EXEC_SECURITY must be full or safe-bin, not ${JSON.stringify(mode)}`);
  const bins = (env.AGENT_EXEC_SAFE_BINS ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  for (const name of bins) {
    if (!/^[A-Za-z0-9._+-]+$/.test(name)) {
      throw new Error(`AGENT_EXEC_SAFE_BINS names programs, not paths or patterns: ${JSON.stringify(name)}`);
    }
  }
  return { security: parsed.data, ...(bins.length ? { safeBins: bins } : {}) };
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
