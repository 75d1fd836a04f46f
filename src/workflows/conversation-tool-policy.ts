import type { ConversationOptions } from '../shared/conversation-options';
import { TOOL_PROFILES } from '../shared/tool-catalog';
import type { ToolPolicyStep } from '../shared/tool-policy';

/**
 * A conversation's own steps of the policy pipeline: its profile (with `alsoAllow`), then its
 * `allow`/`deny`, then the older `tools` list. The worker's policy (the pipeline's global step) is
 * applied by the worker before it lists its tools, so the workflow never sees what it denies.
 */
export function conversationToolPolicySteps(
  options: Pick<ConversationOptions, 'profile' | 'allow' | 'alsoAllow' | 'deny' | 'tools'>,
): ToolPolicyStep[] {
  const profile = options.profile ?? 'full';
  const steps: ToolPolicyStep[] = [
    {
      label: `profile ${profile}`,
      allow: TOOL_PROFILES[profile],
      alsoAllow: options.alsoAllow,
      catalogAllow: true,
    },
    { label: 'conversation', allow: options.allow, deny: options.deny },
  ];
  if (options.tools) steps.push({ label: 'conversation tools', allow: options.tools });
  return steps;
}
