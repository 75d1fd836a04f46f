import { type ToolPolicy, applyToolPolicyPipeline } from '../shared/tool-policy';
import type { ToolRegistry } from '../tools/registry';

/**
 * The global step of the policy pipeline: what this worker offers at all. A
 * tool it removes is neither listed to conversations nor run, whatever a conversation allows. The
 * same step filters the tools external sources offer whenever they are discovered.
 */
export function applyWorkerToolPolicy(
  registry: ToolRegistry,
  policy: ToolPolicy,
  warn: (message: string) => void,
): ToolRegistry {
  const step = { label: 'worker', allow: policy.allow, deny: policy.deny };
  const { tools, warnings } = applyToolPolicyPipeline(registry.names(), [step]);
  for (const warning of warnings) warn(warning);
  // External tools are only known once discovered; entries they do not match are not worth a warning.
  return registry.only(tools, (names) => applyToolPolicyPipeline(names, [step]).tools);
}

/** AGENT_TOOLS_ALLOW and AGENT_TOOLS_DENY: comma-separated entries; unset or empty means no such list. */
export function toolPolicyFromEnv(env: NodeJS.ProcessEnv): ToolPolicy {
  const list = (value: string | undefined) => {
    const entries = (value ?? '')
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean);
    return entries.length ? entries : undefined;
  };
  const allow = list(env.AGENT_TOOLS_ALLOW);
  const deny = list(env.AGENT_TOOLS_DENY);
  return { ...(allow ? { allow } : {}), ...(deny ? { deny } : {}) };
}
