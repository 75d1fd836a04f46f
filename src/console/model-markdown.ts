import MarkdownIt from 'markdown-it';
import sanitizeHtml from 'sanitize-html';
import { SafeHtml, escapeHtml } from './html';

/**
 * What a model or a tool wrote, as markdown a page can show: raw HTML is off (it shows as text), the
 * result goes through a sanitizer that keeps only markdown's own tags, links go to http(s) only and
 * open in a new tab without an opener or referrer, and an image is a button that names where it is
 * (a model can leak a secret in an image URL's query string): the console's script loads it when
 * clicked. Nothing it writes can run script, post a form or style the page.
 */
const markdown = new MarkdownIt({ html: false, linkify: false, typographer: false });

markdown.renderer.rules.image = (tokens, at) => {
  const token = tokens[at]!;
  const source = token.attrGet('src') ?? '';
  const alt = token.content || 'image';
  const url = httpUrl(source);
  if (!url) return escapeHtml(`[image: ${alt}]`);
  return `<button type="button" class="remote-image" data-src="${escapeHtml(url.toString())}">${escapeHtml(
    `Load image "${alt}" from ${url.host}`,
  )}</button>`;
};

const ALLOWED: sanitizeHtml.IOptions = {
  allowedTags: [
    'p',
    'br',
    'hr',
    'em',
    'strong',
    'del',
    's',
    'code',
    'pre',
    'blockquote',
    'ul',
    'ol',
    'li',
    'h1',
    'h2',
    'h3',
    'h4',
    'h5',
    'h6',
    'a',
    'table',
    'thead',
    'tbody',
    'tr',
    'th',
    'td',
    'button',
  ],
  allowedAttributes: {
    a: ['href', 'target', 'rel'],
    button: ['type', 'class', 'data-src'],
    ol: ['start'],
  },
  allowedSchemes: ['http', 'https'],
  allowedSchemesAppliedToAttributes: ['href'],
  allowProtocolRelative: false,
  allowedClasses: { button: ['remote-image'] },
  transformTags: {
    a: (tagName, attribs): sanitizeHtml.Tag => {
      const url = httpUrl(attribs.href ?? '');
      return url
        ? {
            tagName,
            attribs: { href: url.toString(), target: '_blank', rel: 'noopener noreferrer nofollow' },
          }
        : { tagName: 'span', attribs: {} };
    },
    button: (tagName, attribs): sanitizeHtml.Tag =>
      attribs.class === 'remote-image' && httpUrl(attribs['data-src'] ?? '')
        ? { tagName, attribs: { type: 'button', class: 'remote-image', 'data-src': attribs['data-src']! } }
        : { tagName: 'span', attribs: {} },
  },
};

/** `text` (markdown written by a model or a tool) as sanitized HTML. */
export function modelMarkdown(text: string): SafeHtml {
  return new SafeHtml(sanitizeHtml(markdown.render(text), ALLOWED));
}

function httpUrl(text: string): URL | undefined {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}
