import { patched } from '@temporalio/workflow';
import { defaultApprovalMode, effectiveApprovalMode } from '../shared/approvals';
import { type SystemPromptRequest, withAppendedPrompt } from '../shared/system-prompt';
import { systemPromptActivities } from './activity-proxies';
import type { PausedRun, RunContext } from './run-context';
import type { RunInProgress } from './run-in-progress';
import type { OfferedTools } from './worker-tools';
import { workflowTime } from './workflow-time';

/** Marks executions whose runs send the worker's default system prompt when the conversation sets none. */
export const DEFAULT_SYSTEM_PROMPT_PATCH = 'default-system-prompt';

/**
 * The system prompt every model call of this run sends: the conversation's own, or the default the
 * worker wrote (a resumed run keeps the one it started with), each with the conversation's appended
 * text. The default is written once per execution and UTC day (and again when the tools offered
 * change): a local activity at every run's start cost about 15 ms a run, and the same bytes keep
 * the provider's prompt cache. `failed` when the worker could not write it (the run ended).
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
  const request = promptRequest(context, run, offered);
  const kept = context.defaultPrompts.get(request);
  if (kept !== undefined) return { prompt: withAppendedPrompt(kept, options.appendSystemPrompt) };
  try {
    const written = await systemPromptActivities.composeSystemPrompt(request);
    context.defaultPrompts.keep(request, written);
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

/**
 * The default prompts an execution's worker wrote, by what they were asked for and the UTC day
 * (workflow time) they were written on: a new day, or other tools, writes a new one.
 */
export class DefaultPrompts {
  private kept: { key: string; day: string; prompt: string } | undefined;

  get(request: SystemPromptRequest): string | undefined {
    const kept = this.kept;
    return kept && kept.key === JSON.stringify(request) && kept.day === utcDay() ? kept.prompt : undefined;
  }

  keep(request: SystemPromptRequest, prompt: string): void {
    this.kept = { key: JSON.stringify(request), day: utcDay(), prompt };
  }
}

function utcDay(): string {
  return new Date(workflowTime()).toISOString().slice(0, 10);
}
