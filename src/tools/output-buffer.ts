/** Keeps the first and last `half` bytes of a stream of output, counting what falls between. */
export class HeadTailBuffer {
  private head = Buffer.alloc(0);
  private tail = Buffer.alloc(0);
  private total = 0;

  constructor(private readonly half: number) {}

  push(chunk: Buffer): void {
    this.total += chunk.length;
    if (this.head.length < this.half) {
      const room = this.half - this.head.length;
      this.head = Buffer.concat([this.head, chunk.subarray(0, room)]);
      chunk = chunk.subarray(room);
    }
    if (chunk.length > 0) {
      this.tail = Buffer.concat([this.tail, chunk]);
      if (this.tail.length > this.half) this.tail = this.tail.subarray(this.tail.length - this.half);
    }
  }

  get bytes(): number {
    return this.total;
  }

  /** The last `bytes` bytes seen, for progress reports. */
  recent(bytes: number): string {
    const source = this.tail.length > 0 ? Buffer.concat([this.head, this.tail]) : this.head;
    return source.subarray(Math.max(0, source.length - bytes)).toString('utf8');
  }

  toString(): string {
    const omitted = this.total - this.head.length - this.tail.length;
    if (omitted <= 0) return Buffer.concat([this.head, this.tail]).toString('utf8');
    return `${this.head.toString('utf8')}\n…[${omitted} bytes of output omitted]…\n${this.tail.toString('utf8')}`;
  }
}
