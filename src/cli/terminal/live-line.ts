import { printable } from '../../shared/printable-text';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const REDRAW_MS = 100;
const CLEAR = '\r\x1b[2K';

/**
 * One line at the bottom of a terminal saying what is happening and for how long (a spinner, the
 * words, the elapsed seconds), redrawn in place; lines printed through it go above it. On a stream
 * that is not a terminal it draws nothing and prints lines as they are.
 */
export class LiveLine {
  private status: { text: string; since: number } | undefined;
  private frame = 0;
  private drawn = false;
  private readonly pausedBy = new Set<string>();
  private readonly timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly output: NodeJS.WriteStream = process.stderr,
    private readonly now: () => number = Date.now,
  ) {
    if (output.isTTY) {
      this.timer = setInterval(() => this.draw(), REDRAW_MS);
      this.timer.unref();
    }
  }

  /** What is happening now; the elapsed time restarts when the words change. */
  show(text: string): void {
    if (this.status?.text !== text) this.status = { text, since: this.now() };
    this.draw();
  }

  /** Nothing is happening worth a spinner (idle, or asking the person). */
  hide(): void {
    this.status = undefined;
    this.clear();
  }

  /** Takes the line away while something else writes to the terminal (streamed text, a prompt), until resumed by the same. */
  pause(by: string): void {
    this.pausedBy.add(by);
    this.clear();
  }

  resume(by: string): void {
    this.pausedBy.delete(by);
    this.draw();
  }

  print(line: string): void {
    this.clear();
    this.output.write(`${line}\n`);
    this.draw();
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.clear();
  }

  private draw(): void {
    if (!this.output.isTTY || this.pausedBy.size || !this.status) return;
    const seconds = ((this.now() - this.status.since) / 1_000).toFixed(1);
    const width = Math.max(20, (this.output.columns || 80) - 1);
    const line = `${FRAMES[this.frame++ % FRAMES.length]} ${printable(this.status.text)} · ${seconds} s`;
    this.output.write(`${CLEAR}${line.length > width ? `${line.slice(0, width - 1)}…` : line}`);
    this.drawn = true;
  }

  private clear(): void {
    if (!this.drawn) return;
    this.output.write(CLEAR);
    this.drawn = false;
  }
}
