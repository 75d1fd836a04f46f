import { convert } from 'html-to-text';

export interface ReadableText {
  title?: string;
  text: string;
}

/** What a reader of the page does not see: code, styles, embedded documents and media, forms' chrome. */
const SKIPPED = [
  'script',
  'style',
  'noscript',
  'template',
  'svg',
  'canvas',
  'iframe',
  'object',
  'embed',
  'head',
  'button',
  'select',
];

/**
 * The readable text of an HTML page: headings, paragraphs, lists and tables as plain text, links
 * with their absolute targets, images by their alt text; scripts, styles and other non-text parts
 * left out. The title comes from `<title>`.
 */
export function htmlToReadableText(html: string, pageUrl: string): ReadableText {
  const text = convert(html, {
    wordwrap: false,
    formatters: {
      altText: (element, _walk, builder) => {
        const alt = (element.attribs?.alt ?? '').trim();
        if (alt) builder.addInline(`[${alt}]`);
      },
    },
    baseElements: { selectors: ['body'], returnDomByDefault: true },
    selectors: [
      ...SKIPPED.map((selector) => ({ selector, format: 'skip' })),
      {
        selector: 'a',
        options: {
          hideLinkHrefIfSameAsText: true,
          pathRewrite: (href: string) => absoluteUrl(href, pageUrl),
        },
      },
      { selector: 'img', format: 'altText' },
      ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({
        selector,
        options: { uppercase: false },
      })),
      { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false } },
    ],
  })
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  const titleMatch = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html);
  const title = titleMatch ? convert(titleMatch[1]!, { wordwrap: false }).replace(/\s+/g, ' ').trim() : '';
  return { ...(title ? { title } : {}), text };
}

function absoluteUrl(href: string, pageUrl: string): string {
  try {
    return new URL(href, pageUrl).href;
  } catch {
    return href;
  }
}
