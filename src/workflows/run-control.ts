import { CancellationScope, proxySinks } from '@temporalio/workflow';
import type { CancelRequestSinks } from '../shared/cancel-request-sink';
import type { AbortInput } from '../shared/conversation-api';
import type { UserMessage } from '../shared/messages';

const { cancelRequests } = proxySinks<CancelRequestSinks>();

/**
 * How a run in progress is interrupted. Abort cancels the run's scope (model call, approvals and
 * tools); steer cancels only the scope of the current turn's tools and leaves its message for the
 * turn loop to add once their results are in.
 */
export class RunControl {
  /** Created in the conversation's root scope; everything the run awaits runs inside it. */
  readonly scope = new CancellationScope();
  private toolsScope: CancellationScope | undefined;
  private readonly steering: UserMessage[] = [];
  private abortRequest: AbortInput | undefined;

  constructor(readonly run: number) {}

  steer(message: UserMessage): void {
    this.steering.push(message);
    if (!this.toolsScope) return;
    this.toolsScope.cancel();
    cancelRequests.requested();
  }

  abort(input: AbortInput): void {
    if (this.abortRequest) return;
    this.abortRequest = input;
    this.scope.cancel();
    cancelRequests.requested();
  }

  get aborted(): AbortInput | undefined {
    return this.abortRequest;
  }

  get hasSteering(): boolean {
    return this.steering.length > 0;
  }

  takeSteering(): UserMessage[] {
    return this.steering.splice(0);
  }

  /** Runs the turn's tools in a scope a steer can cancel; must be called inside `scope`. */
  async runTools<T>(tools: () => Promise<T>): Promise<T> {
    const scope = new CancellationScope();
    this.toolsScope = scope;
    try {
      return await scope.run(tools);
    } finally {
      this.toolsScope = undefined;
    }
  }
}
