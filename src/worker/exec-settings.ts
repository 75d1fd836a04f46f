import { ExecSecurityModeSchema } from '../shared/exec-security';
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
