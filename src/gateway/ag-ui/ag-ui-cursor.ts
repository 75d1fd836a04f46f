import { BadRequest } from '../gateway-errors';

/**
 * Where a page stands in a conversation's events, as every AG-UI event the gateway writes names it
 * (the SSE id and `metadata["durable-agent"].lastEventId`): the last kept event, and within the text
 * a model call is streaming, how many characters of which call. A page that reconnects with it gets
 * what came after and nothing twice; the gateway keeps nothing of it.
 */
export interface AgUiCursor {
  /** The last kept event seen. */
  seq: number;
  /** The model call whose text was streaming, and how many of its characters were seen. */
  text?: { call: string; chars: number };
}

/** `12`, or `12~call~340` within a streamed text. */
export function formatCursor(cursor: AgUiCursor): string {
  return cursor.text ? `${cursor.seq}~${cursor.text.call}~${cursor.text.chars}` : String(cursor.seq);
}

/** Reads a cursor the gateway wrote; anything else is 400. */
export function parseCursor(text: string): AgUiCursor {
  const first = text.indexOf('~');
  const last = text.lastIndexOf('~');
  const seqText = first < 0 ? text : text.slice(0, first);
  const seq = /^\d{1,15}$/.test(seqText) ? Number(seqText) : NaN;
  if (!Number.isSafeInteger(seq))
    throw new BadRequest(`not an AG-UI event id: ${JSON.stringify(text.slice(0, 80))}`);
  if (first < 0) return { seq };
  const call = text.slice(first + 1, last);
  const charsText = text.slice(last + 1);
  if (last === first || call.length === 0 || !/^\d{1,9}$/.test(charsText))
    throw new BadRequest(`not an AG-UI event id: ${JSON.stringify(text.slice(0, 80))}`);
  return { seq, text: { call, chars: Number(charsText) } };
}
