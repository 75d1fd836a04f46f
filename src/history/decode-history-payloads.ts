import type { Payload, PayloadCodec } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';

/** A history with its payloads decoded, and what could not be. */
export interface DecodedHistory {
  /** The history, payloads decoded where the codecs could. */
  history: temporal.api.history.v1.IHistory;
  /** Payloads the codecs could not decode (say, a blob missing from this machine's blob store), left as stored. */
  undecoded: number;
  /** The first of those failures, to tell the user why. */
  firstError?: string;
}

/**
 * Undoes the client's payload codecs (compression, blob references) on every payload list and
 * failure attribute of a history, in place: what the timeline reads and `export` writes is then
 * the values themselves, and such a history still replays (the codecs pass plain payloads through).
 * Headers, memos and search attributes are left as they are.
 */
export async function decodeHistoryPayloads(
  history: temporal.api.history.v1.IHistory,
  codecs: readonly PayloadCodec[],
): Promise<DecodedHistory> {
  const result: DecodedHistory = { history, undecoded: 0 };
  if (codecs.length === 0) return result;
  const decode = async (payloads: Payload[]): Promise<Payload[]> => {
    try {
      let decoded = payloads;
      for (const codec of [...codecs].reverse()) decoded = await codec.decode(decoded);
      return decoded;
    } catch (error) {
      result.undecoded += payloads.length;
      result.firstError ??= (error as Error).message;
      return payloads;
    }
  };
  const visit = async (node: unknown): Promise<void> => {
    if (typeof node !== 'object' || node === null || ArrayBuffer.isView(node)) return;
    if (Array.isArray(node)) {
      for (const child of node) await visit(child);
      return;
    }
    const fields = node as Record<string, unknown>;
    for (const key of Object.keys(fields)) {
      const value = fields[key];
      if (key === 'header' || key === 'memo' || key === 'searchAttributes') continue;
      if (key === 'payloads' && Array.isArray(value)) fields[key] = await decode(value as Payload[]);
      else if (key === 'encodedAttributes' && isPayload(value)) fields[key] = (await decode([value]))[0];
      else await visit(value);
    }
  };
  await visit(history.events ?? []);
  return result;
}

function isPayload(value: unknown): value is Payload {
  return typeof value === 'object' && value !== null && 'data' in value;
}
