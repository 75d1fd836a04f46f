import type { AgentEvent } from '../../shared/events';
import { printable, splitAtUnfinishedEscape } from '../../shared/printable-text';

type ModelText = Extract<AgentEvent, { type: 'model_text' }>;
type RunFinished = Extract<AgentEvent, { type: 'run_finished' }>;

/** What must stop drawing while text streams to the same terminal. */
interface Pausable {
  pause(by: string): void;
  resume(by: string): void;
}

/**
 * The model's words written to a terminal as they arrive. Text of a turn that goes on to call
 * tools ends with that turn; the last turn's text is completed by the run's answer, so the answer
 * is never written twice. Where some text was not seen (a watcher elsewhere only sees heartbeats),
 * "…" marks the gap and the answer is written whole at the end.
 */
export class StreamedText {
  private call: string | undefined;
  private shown = '';
  private whole = true;
  private open = false;
  /** The last call's text, for recognising its model_response. */
  private lastCallText = '';
  /** An escape sequence the last piece ended inside of, held until the next piece shows where it ends. */
  private held = '';

  constructor(
    private readonly output: NodeJS.WritableStream,
    private readonly pausable?: Pausable,
  ) {}

  add(event: ModelText): void {
    if (event.call !== this.call) {
      this.end();
      this.call = event.call;
      this.shown = '';
      this.whole = true;
    }
    if (!this.open) this.pausable?.pause('text');
    this.open = true;
    if (event.offset > this.shown.length) {
      this.release();
      this.output.write('…');
      this.whole = false;
    }
    this.write(event.text);
    this.shown += event.text;
  }

  /** The turn's text is over (it went on to call tools). */
  end(): void {
    if (this.open) {
      this.release();
      this.output.write('\n');
      this.pausable?.resume('text');
    }
    this.open = false;
    this.lastCallText = this.call !== undefined ? this.shown : '';
    this.call = undefined;
  }

  /** True when the event only repeats text already streamed (a turn's words before its tool calls). */
  shows(event: AgentEvent): boolean {
    return (
      event.type === 'model_response' &&
      event.text !== '' &&
      (this.shown.startsWith(event.text) || this.lastCallText.startsWith(event.text))
    );
  }

  /** Writes what of the answer is not on the terminal yet; true when the answer is now there whole. */
  finish(event: RunFinished): boolean {
    const streamed = this.call !== undefined && this.whole && event.answer.startsWith(this.shown);
    if (streamed && event.outcome === 'answered') {
      this.write(event.answer.slice(this.shown.length));
      this.release();
      this.output.write('\n');
      this.pausable?.resume('text');
      this.open = false;
      this.call = undefined;
      this.shown = '';
      return true;
    }
    this.end();
    return false;
  }

  /** The model's text as a terminal may show it: no escape sequence, even one cut across pieces. */
  private write(text: string): void {
    const { ready, held } = splitAtUnfinishedEscape(this.held + text);
    this.held = held;
    this.output.write(printable(ready));
  }

  /** What was held back, once no piece will finish it. */
  private release(): void {
    this.output.write(printable(this.held));
    this.held = '';
  }
}
