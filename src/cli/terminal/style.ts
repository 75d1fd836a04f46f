/** Colour on a terminal unless NO_COLOR is set (to anything but empty) or TERM is dumb. */
export function colourWanted(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(stream.isTTY) && !env.NO_COLOR && env.TERM !== 'dumb';
}

const CODES = { red: 31, green: 32, yellow: 33, cyan: 36, dim: 2 } as const;
type Style = keyof typeof CODES;

export function paint(style: Style, text: string): string {
  return `\x1b[${CODES[style]}m${text}\x1b[0m`;
}

/** The style of a progress line, from the mark it starts with (see event-line.ts). */
const MARK_STYLES: Array<[RegExp, Style]> = [
  [/^[✓]/u, 'green'],
  [/^[✗!■]/u, 'red'],
  [/^[?⚠🔑]/u, 'yellow'],
  [/^[→⇉↪]/u, 'cyan'],
  [/^( {2}…|·|⇣|⚡)/u, 'dim'],
];

export function styledLine(line: string): string {
  const style = MARK_STYLES.find(([mark]) => mark.test(line))?.[1];
  return style ? paint(style, line) : line;
}
