/** Rounds of shrinking when output that is not UTF-8 decodes larger than its bytes (each bad byte is U+FFFD, 3 bytes). */
const FIT_ROUNDS = 8;

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

  /**
   * The output kept, at most `maxBytes` of UTF-8 when given: all of it when it fits, else its
   * beginning, a line saying how many bytes were left out, and its end. The end has priority: the
   * beginning gets at most half of the room, the end the rest, so a command's last lines (its final
   * error, its summary) always arrive.
   */
  toString(maxBytes = Infinity): string {
    const whole = this.total === this.head.length + this.tail.length;
    // When nothing was left out, beginning and end are cut from the same bytes.
    const first = whole ? Buffer.concat([this.head, this.tail]) : this.head;
    const last = whole ? first : this.tail;
    if (whole) {
      const text = first.toString('utf8');
      if (Buffer.byteLength(text) <= maxBytes) return text;
    }
    const overlap = whole ? first.length : Infinity;
    const room = Math.max(0, maxBytes - markerBytes(this.total));
    let headBytes = Math.min(first.length, Math.floor(room / 2));
    let tailBytes = Math.min(last.length, room - headBytes, overlap - headBytes);
    headBytes = Math.min(first.length, room - tailBytes, overlap - tailBytes);
    for (let round = 0; ; round++) {
      const text = this.render(first, last, headBytes, tailBytes);
      const size = Buffer.byteLength(text) - markerBytes(this.total);
      if (size <= room || round === FIT_ROUNDS) return text;
      headBytes = Math.floor((headBytes * room) / size);
      tailBytes = Math.floor((tailBytes * room) / size);
    }
  }

  /** The first `headBytes` of `first`, a line saying what was left out, the last `tailBytes` of `last`. */
  private render(first: Buffer, last: Buffer, headBytes: number, tailBytes: number): string {
    const omitted = this.total - headBytes - tailBytes;
    const head = decodeHead(first.subarray(0, headBytes));
    const tail = decodeTail(last.subarray(last.length - tailBytes));
    return `${head}\n…[${omitted} bytes of output omitted]…\n${tail}`;
  }
}

/** The most the line between beginning and end takes, for output of `total` bytes. */
const markerBytes = (total: number) => Buffer.byteLength(`\n…[${total} bytes of output omitted]…\n`);

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
