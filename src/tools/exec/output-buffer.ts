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
    return `${decodeHead(this.head)}\n…[${omitted} bytes of output omitted]…\n${decodeTail(this.tail)}`;
  }
}

const isContinuation = (byte: number | undefined) => byte !== undefined && (byte & 0xc0) === 0x80;

/** Drops a character cut off at the end, rather than decoding half of it as U+FFFD. */
function decodeHead(bytes: Buffer): string {
  let end = bytes.length;
  let back = 0;
  while (back < 4 && end - back - 1 >= 0 && isContinuation(bytes[end - back - 1])) back++;
  const lead = bytes[end - back - 1];
  if (lead !== undefined && lead >= 0xc0) {
    const needed = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
    if (back + 1 < needed) end -= back + 1;
  }
  return bytes.subarray(0, end).toString('utf8');
}

/** Drops continuation bytes of a character whose start fell before the tail. */
function decodeTail(bytes: Buffer): string {
  let start = 0;
  while (start < 4 && isContinuation(bytes[start])) start++;
  return bytes.subarray(start).toString('utf8');
}
