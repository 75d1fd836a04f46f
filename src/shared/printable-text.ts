/* eslint-disable no-control-regex -- matching control characters is the point here */
/**
 * Terminal escape sequences: CSI (colours, cursor moves, clearing), OSC (titles, hyperlinks,
 * clipboard writes), DCS/SOS/PM/APC strings, and two-character escapes. Dropped whole rather than
 * leaving `[31m` behind.
 */
const ESCAPE_SEQUENCES =
  /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[PX^_][^\x1b]*\x1b\\|\x1b[@-Z\\-_]/g;
/**
 * What a terminal acts on rather than shows, apart from newline and tab: the other C0 controls
 * (carriage return included, which lets a line be overwritten by what follows it), DEL, the C1
 * controls (0x9b is CSI on terminals that take 8-bit controls) and the bidirectional overrides
 * that show text in another order than it is.
 */
const UNPRINTABLE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;
/** The start of an escape sequence that has not ended yet: its ESC, a CSI without its final byte, an unterminated string. */
const UNFINISHED_ESCAPE = /^\x1b(?:\[[0-?]*[ -/]*|[\]PX^_][^\x07\x1b]*)?$/;
/* eslint-enable no-control-regex */
/** How much of an unfinished escape sequence is held back for the piece that may finish it. */
const MAX_HELD = 1_024;

/**
 * `text` with what a terminal would act on written out as escapes (`\x1b`, `\r`, `\u202e`) rather
 * than dropped: for what a person decides on, such as a tool call's arguments, which run as they
 * are and must be seen as they are. Newlines and tabs stay.
 */
export function withUnprintableShown(text: string): string {
  return text.replace(UNPRINTABLE, (char) => {
    const code = char.charCodeAt(0);
    if (char === '\r') return '\\r';
    return code <= 0xff
      ? `\\x${code.toString(16).padStart(2, '0')}`
      : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** `text` without its terminal escape sequences. */
export function withoutEscapeSequences(text: string): string {
  return text.replace(ESCAPE_SEQUENCES, '');
}

/**
 * `text` as it may be written to a terminal: what a model, a tool or a file wrote can neither
 * colour, move, retitle or clear the screen, write the clipboard, nor hide one text behind another.
 * Newlines and tabs stay.
 */
export function printable(text: string): string {
  return withoutEscapeSequences(text).replace(UNPRINTABLE, '');
}

/**
 * Text that arrives in pieces, split where a piece ends inside an escape sequence: what can be made
 * printable now, and the unfinished sequence to put before the next piece, so that a sequence cut
 * in two is dropped whole rather than leaving its visible half behind.
 */
export function splitAtUnfinishedEscape(text: string): { ready: string; held: string } {
  const start = text.lastIndexOf('\x1b');
  if (start === -1 || text.length - start > MAX_HELD || !UNFINISHED_ESCAPE.test(text.slice(start))) {
    return { ready: text, held: '' };
  }
  return { ready: text.slice(0, start), held: text.slice(start) };
}
