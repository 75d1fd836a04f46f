/** What one read of a background process's output returns. */
export interface OutputRead {
  text: string;
  /** Bytes that were produced since the last read but dropped before it, the buffer being full. */
  dropped: number;
  /** Bytes still unread after this one (the read was capped). */
  pending: number;
}

/**
 * The output of a background process, read in order by one reader: keeps at most `retainBytes` of
 * the newest output, and remembers where the last read stopped, so each read returns only what is
 * new. Reads end on a UTF-8 character boundary; a character split by the drop of old output is skipped.
 */
export class PollableOutput {
  private chunks: Buffer[] = [];
  /** Offset (in everything ever written) of the first retained byte. */
  private retainedFrom = 0;
  private retained = 0;
  private readFrom = 0;

  constructor(private readonly retainBytes: number) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.retained += chunk.length;
    while (this.retained > this.retainBytes) {
      const first = this.chunks[0]!;
      const excess = this.retained - this.retainBytes;
      if (first.length <= excess) {
        this.chunks.shift();
        this.retained -= first.length;
        this.retainedFrom += first.length;
      } else {
        this.chunks[0] = first.subarray(excess);
        this.retained -= excess;
        this.retainedFrom += excess;
      }
    }
  }

  /** Every byte ever written. */
  get total(): number {
    return this.retainedFrom + this.retained;
  }

  get unread(): number {
    return this.total - this.readFrom;
  }

  /**
   * The output since the previous read, at most `maxBytes` of UTF-8 text: output that is not UTF-8
   * decodes larger than its bytes (U+FFFD for each bad one), so fewer bytes are read then.
   */
  read(maxBytes: number): OutputRead {
    const dropped = Math.max(0, this.retainedFrom - this.readFrom);
    const all = Buffer.concat(this.chunks);
    let start = Math.max(0, this.readFrom - this.retainedFrom);
    if (dropped > 0) while (start < all.length && isContinuation(all[start])) start++;
    let take = maxBytes;
    let end: number;
    let text: string;
    for (let round = 0; ; round++) {
      end = Math.min(all.length, start + take);
      if (end < all.length) end = characterBoundaryBefore(all, end);
      text = all.subarray(start, end).toString('utf8');
      const size = Buffer.byteLength(text);
      if (size <= maxBytes || round === FIT_ROUNDS) break;
      take = Math.floor(((end - start) * maxBytes) / size);
    }
    this.readFrom = this.retainedFrom + end;
    return { text, dropped, pending: all.length - end };
  }

  /** The newest output, without moving the read position: for a listing or a progress report. */
  tail(maxBytes: number): string {
    const all = Buffer.concat(this.chunks);
    let start = Math.max(0, all.length - maxBytes);
    while (start < all.length && isContinuation(all[start])) start++;
    return all.subarray(start).toString('utf8');
  }
}

/** Rounds of reading less when the bytes read decode larger than the room. */
const FIT_ROUNDS = 8;

const isContinuation = (byte: number | undefined) => byte !== undefined && (byte & 0xc0) === 0x80;

/** `end` moved back to the start of the character it would cut, if it would cut one. */
function characterBoundaryBefore(bytes: Buffer, end: number): number {
  let start = end;
  while (start > 0 && isContinuation(bytes[start])) start--;
  return start;
}
