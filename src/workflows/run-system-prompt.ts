import { patched } from '@temporalio/workflow';
import { defaultApprovalMode, effectiveApprovalMode } from '../shared/approvals';
import { type SystemPromptRequest, withAppendedPrompt } from '../shared/system-prompt';
import { systemPromptActivities } from './activity-proxies';
import type { PausedRun, RunContext } from './run-context';
import type { RunInProgress } from './run-in-progress';
import type { OfferedTools } from './worker-tools';

/** Marks executions whose runs send the worker's default system prompt when the conversation sets none. */
export const DEFAULT_SYSTEM_PROMPT_PATCH = 'default-system-prompt';

/**
 * The system prompt every model call of this run sends: the conversation's own, or the default the
 * worker writes at the run's start (a resumed run keeps the one it started with), each with the
 * conversation's appended text. `failed` when the worker could not write it (the run ended).
 */
export async function systemPromptOfRun(
  context: RunContext,
  run: RunInProgress,
  offered: OfferedTools,
  resumed: PausedRun | undefined,
): Promise<{ prompt: string | undefined } | 'failed'> {
  const { options } = context;
  if (options.systemPrompt !== undefined) {
    return { prompt: withAppendedPrompt(options.systemPrompt, options.appendSystemPrompt) };
  }
  if (resumed?.systemPrompt !== undefined) return { prompt: resumed.systemPrompt };
  // Runs recorded before the default existed sent no system prompt, and replay the same way.
  if (!patched(DEFAULT_SYSTEM_PROMPT_PATCH)) {
    return { prompt: withAppendedPrompt(undefined, options.appendSystemPrompt) };
  }
  try {
    const written = await systemPromptActivities.composeSystemPrompt(promptRequest(context, run, offered));
    return { prompt: withAppendedPrompt(written, options.appendSystemPrompt) };
  } catch (error) {
    run.fail('could not write the default system prompt', error);
    return 'failed';
  }
}

function promptRequest(context: RunContext, run: RunInProgress, offered: OfferedTools): SystemPromptRequest {
  const { approval, workspace } = context.options;
  const tools = offered.toModel(run.ownersRun).map((name) => {
    const descriptor = offered.descriptors.get(name);
    // A tool that reaches hosts asks for every host but the few it names.
    const toolDefault = descriptor?.hostsWithoutApproval
      ? 'ask'
      : (descriptor?.approval ?? defaultApprovalMode(descriptor?.risk ?? 'low'));
    return { name, asks: effectiveApprovalMode(approval, name, toolDefault) !== 'auto' };
  });
  return {
    ...(workspace !== undefined ? { workspace } : {}),
    tools,
    ...(approval.timeoutMs !== undefined ? { approvalTimeoutMs: approval.timeoutMs } : {}),
  };
}
