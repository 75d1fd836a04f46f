import type { ConversationOptionsInput } from '../../src/shared/conversation-options';
import type { BenchContext } from './context';
import { type HistoryEvent, HistoryFollower } from './history';
import type { BenchModelServer, Directive } from './model-server';
import type { Stack } from './stacks';

/** Resolves waiters when the model server has sent the text answer of a conversation's turn. */
export class AnswerHub {
  private readonly answered = new Set<string>();
  private readonly waiters = new Map<string, () => void>();

  constructor(model: BenchModelServer) {
    model.onAnswer = (directive) => {
      const key = `${directive.c}\u0000${directive.t}`;
      const waiter = this.waiters.get(key);
      if (waiter) {
        this.waiters.delete(key);
        waiter();
      } else this.answered.add(key);
    };
  }

  wait(conversationId: string, turn: number, timeoutMs = 120_000): Promise<void> {
    const key = `${conversationId}\u0000${turn}`;
    if (this.answered.delete(key)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(key);
        reject(new Error(`no answer for ${conversationId} turn ${turn} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.set(key, () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

/**
 * A conversation driven turn by turn: each turn sends a message and returns once the run has
 * finished in the workflow (the workflow task after the turn's last model call completed), as a
 * user sees it. The model server says when the last answer went out; the history long poll then
 * finds the workflow task that ends the run, so nothing polls on a timer.
 */
export class DrivenConversation {
  private turn = 0;

  private constructor(
    readonly stack: Stack,
    readonly id: string,
    private readonly follower: HistoryFollower,
    private readonly answers: AnswerHub,
  ) {}

  static async start(
    context: BenchContext,
    stack: Stack,
    id: string,
    taskQueue: string,
    options?: ConversationOptionsInput,
  ): Promise<DrivenConversation> {
    await stack.startConversation(id, taskQueue, options);
    const follower = await HistoryFollower.atEnd(stack.client, id);
    return new DrivenConversation(stack, id, follower, context.answers);
  }

  get turns(): number {
    return this.turn;
  }

  get runIds(): string[] {
    return [...this.follower.runIds, this.follower.currentRunId];
  }

  typeOf = (scheduledEventId: number) => this.follower.activityType(scheduledEventId);

  /** A turn number for a message sent some other way (a steering message). */
  reserveTurn(): number {
    return ++this.turn;
  }

  /** Sends the next turn's message (`directive` without `c` and `t`). */
  async send(directive: Omit<Directive, 'c' | 't'>): Promise<number> {
    const turn = ++this.turn;
    await this.stack.send(this.id, { c: this.id, t: turn, ...directive });
    return turn;
  }

  /** Waits for the end of turn `turn`, which made `modelCalls` model calls; returns its events. */
  async finished(turn: number, modelCalls = 2): Promise<HistoryEvent[]> {
    try {
      await this.answers.wait(this.id, turn);
    } catch (noAnswer) {
      // The history may say why (a workflow task that failed).
      const why = await this.follower.waitForTurnEnd(this.stack.modelActivity, modelCalls, 1_000).then(
        () => 'the run did finish',
        (error: unknown) => (error instanceof Error ? error.message : String(error)),
      );
      throw new Error(`${noAnswer instanceof Error ? noAnswer.message : String(noAnswer)} (${why})`);
    }
    return this.follower.waitForTurnEnd(this.stack.modelActivity, modelCalls);
  }

  async runTurn(directive: Omit<Directive, 'c' | 't'> = { tool: 'noop' }, modelCalls = 2) {
    const turn = await this.send(directive);
    return this.finished(turn, modelCalls);
  }
}
