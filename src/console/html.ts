/**
 * HTML built from templates whose every interpolation is escaped unless it is already `SafeHtml`
 * (another template's result, or markdown the sanitizer has passed). Nothing else reaches a page.
 */
export class SafeHtml {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

type Interpolation = SafeHtml | string | number | boolean | undefined | null | readonly Interpolation[];

export function html(strings: TemplateStringsArray, ...values: Interpolation[]): SafeHtml {
  let out = strings[0]!;
  values.forEach((value, at) => {
    out += render(value) + strings[at + 1]!;
  });
  return new SafeHtml(out);
}

function render(value: Interpolation): string {
  if (value === undefined || value === null || value === false) return '';
  if (value instanceof SafeHtml) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}
