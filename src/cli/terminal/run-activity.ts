import type { AgentEvent } from '../../shared/events';

/**
 * What a run is doing, in a few words for the live line, followed from its events: calling the
 * model, running tools, or waiting for a person. Undefined when nothing is in progress.
 */
export class RunActivity {
  private running = false;
  private readonly tools = new Map<string, string>();
  private readonly approvals = new Map<string, string>();
  /** The model call's attempt while it is being tried again after a failure. */
  private modelAttempt: number | undefined;

  after(event: AgentEvent): string | undefined {
    switch (event.type) {
      case 'run_started':
        this.running = true;
        break;
      case 'model_retry':
        this.modelAttempt = event.attempt;
        break;
      case 'model_response':
        this.modelAttempt = undefined;
        break;
      case 'tool_execution_start':
        this.running = true;
        this.tools.set(event.toolCallId, event.toolName);
        break;
      case 'tool_execution_end':
        this.tools.delete(event.toolCallId);
        this.approvals.delete(event.toolCallId);
        break;
      case 'approval_requested':
        this.approvals.set(event.toolCallId, event.toolName);
        break;
      case 'approval_decided':
        this.approvals.delete(event.toolCallId);
        break;
      case 'run_finished':
        this.running = false;
        this.modelAttempt = undefined;
        this.tools.clear();
        this.approvals.clear();
        break;
      default:
        break;
    }
    return this.describe();
  }

  get awaitingApproval(): boolean {
    return this.approvals.size > 0;
  }

  private describe(): string | undefined {
    if (!this.running) return undefined;
    if (this.approvals.size)
      return `waiting for approval of ${[...new Set(this.approvals.values())].join(', ')}`;
    if (this.tools.size) return `running ${[...new Set(this.tools.values())].join(', ')}`;
    return this.modelAttempt
      ? `waiting for the model (attempt ${this.modelAttempt})`
      : 'waiting for the model';
  }
}
