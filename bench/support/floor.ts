import { randomUUID } from 'node:crypto';
import { type Message, toolCallsOf } from '../../src/shared/messages';
import { type LoopSteps, loopSteps } from './loop-steps';
import { type Directive, directiveText } from './model-server';

/**
 * The floor: the same turn loop in-process with no Temporal. The same steps as the callModel and
 * runTool activities (loop-steps.ts), the whole transcript sent on every call; nothing is durable.
 */
export class InProcessLoop {
  private readonly steps: LoopSteps;
  private readonly transcript: Message[] = [];
  private turn = 0;

  constructor(
    modelBaseUrl: string,
    private readonly id = `floor-${randomUUID()}`,
  ) {
    this.steps = loopSteps(modelBaseUrl);
  }

  async runTurn(directive: Omit<Directive, 'c' | 't'> = { tool: 'noop' }): Promise<void> {
    const text = directiveText({ c: this.id, t: ++this.turn, ...directive });
    this.transcript.push({ role: 'user', content: text, messageId: randomUUID(), timestamp: Date.now() });
    for (;;) {
      const reply = await this.steps.callModel(this.transcript);
      this.transcript.push(reply);
      const calls = toolCallsOf(reply);
      if (calls.length === 0) return;
      this.transcript.push(...(await Promise.all(calls.map((call) => this.steps.runTool(call)))));
    }
  }
}
