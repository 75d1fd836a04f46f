import { z } from 'zod';
import { type HttpGetResult, httpGet } from './http-get';
import { htmlToReadableText } from './html-text';
import { sniffImageFormat } from '../image-sanitizer';
import { type AgentTool, defineTool, imageResult, textResult } from '../tool';
import { ToolError } from '../tool-error';

export interface WebFetchOptions {
  /** Bytes of body read at most (after decompression). Default 2 MB. */
  maxBytes?: number;
  /** For the whole fetch, redirects included, in ms. Default 30 s, inside the tool's 60 s activity timeout. */
  timeoutMs?: number;
  /** Default 5. */
  maxRedirects?: number;
  /** Lets the model reach loopback, private and link-local addresses. Default false. */
  allowPrivateNetwork?: boolean;
  /**
   * Hosts fetched without asking (AGENT_WEB_FETCH_ALLOW_HOSTS); a fetch from any other host waits
   * for approval, since a URL can carry whatever the model read out of the conversation. Default none.
   */
  allowHosts?: readonly string[];
}

const DEFAULT_MAX_CHARS = 40_000;
const MAX_CHARS = 100_000;
const ERROR_BODY_CHARS = 1_000;
const USER_AGENT = 'durable-agent-web-fetch/0.1';

const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/** Text sent as is: text/*, JSON, XML, JavaScript, YAML and their `+json`/`+xml` relatives. */
function isTextType(mimeType: string): boolean {
  return (
    mimeType.startsWith('text/') ||
    /^application\/(json|xml|javascript|ecmascript|x-ndjson|x-yaml|yaml|toml|x-www-form-urlencoded)$/.test(
      mimeType,
    ) ||
    /\+(json|xml)$/.test(mimeType)
  );
}

/**
 * `web_fetch`: GET an http(s) URL and return what a reader needs: HTML as readable text, text and
 * JSON as they are, images (PNG, JPEG, GIF, WebP) as images for the model, other binary content
 * described but not shown. Bounded in bytes read, time and redirects; by default only public
 * addresses are reached, so the model cannot probe the worker's network or a cloud metadata service.
 */
export function createWebFetchTool(options: WebFetchOptions = {}): AgentTool {
  const limits = {
    maxBytes: options.maxBytes ?? 2 * 1024 * 1024,
    timeoutMs: options.timeoutMs ?? 30_000,
    maxRedirects: options.maxRedirects ?? 5,
    allowPrivateNetwork: options.allowPrivateNetwork ?? false,
  };
  return defineTool({
    hostsWithoutApproval: (options.allowHosts ?? []).map((host) => host.toLowerCase()),
    name: 'web_fetch',
    label: 'Fetch URL',
    description: `Fetch an http or https URL. HTML pages come back as readable text (scripts and styles removed, links kept), text and JSON as they are, images as images. At most ${limits.maxBytes} bytes are read and ${limits.timeoutMs / 1_000} s spent.`,
    parameters: z.object({
      url: z.string().trim().min(1).describe('The http:// or https:// URL'),
      max_chars: z
        .number()
        .int()
        .min(100)
        .max(MAX_CHARS)
        .optional()
        .describe(`Characters of text to return at most (default ${DEFAULT_MAX_CHARS})`),
    }),
    category: 'other',
    // A GET: safe to run again.
    idempotent: true,
    // Reads, changes nothing here (acp risk table: low); where it may reach is bounded by the address guard.
    risk: 'low',
    async execute(_toolCallId, params, signal) {
      // Approval is per host, so a redirect may not take the fetch to another one.
      const response = await httpGet(params.url, {
        ...limits,
        signal,
        userAgent: USER_AGENT,
        sameHostRedirectsOnly: true,
      });
      const header = [
        `URL: ${response.url}`,
        `Status: ${response.status} ${response.statusText}`.trim(),
        ...(response.mimeType ? [`Content-Type: ${response.mimeType}`] : []),
      ];
      const details = {
        url: params.url,
        finalUrl: response.url,
        status: response.status,
        mimeType: response.mimeType,
        bytes: response.body.length,
        truncated: response.truncated,
        redirects: response.redirects,
      };
      const kind = kindOf(response);

      if (response.status < 200 || response.status >= 300) {
        const body = kind === 'html' || kind === 'text' ? readable(response, kind).text : '';
        throw new ToolError(
          errorKindOf(response.status),
          `${response.url} answered ${response.status} ${response.statusText}`.trim() +
            (body ? `: ${body.slice(0, ERROR_BODY_CHARS)}` : ''),
        );
      }
      if (kind === 'image') {
        if (response.truncated) {
          throw new ToolError(
            'ExecutionFailed',
            `the image at ${response.url} is larger than ${limits.maxBytes} bytes`,
          );
        }
        return imageResult({
          data: response.body,
          mimeType: response.mimeType,
          text: header.join('\n'),
          details,
        });
      }
      if (kind === 'binary') {
        return textResult(
          `${header.join('\n')}\n\n[${response.mimeType || 'binary'} content, ${response.body.length}${response.truncated ? '+' : ''} bytes: not text, not shown]`,
          details,
        );
      }
      const { title, text } = readable(response, kind);
      const maxChars = params.max_chars ?? DEFAULT_MAX_CHARS;
      const shown = text.length > maxChars ? text.slice(0, maxChars) : text;
      const notes = [
        ...(shown.length < text.length ? [`[showing ${maxChars} of ${text.length} characters]`] : []),
        ...(response.truncated ? [`[the body was cut at ${limits.maxBytes} bytes]`] : []),
      ];
      return textResult(
        [
          ...header,
          ...(title ? [`Title: ${title}`] : []),
          '',
          shown,
          ...(notes.length ? ['', ...notes] : []),
        ].join('\n'),
        { ...details, ...(title ? { title } : {}), chars: text.length },
      );
    },
  }) as AgentTool;
}

export const webFetchTool = createWebFetchTool();

type BodyKind = 'html' | 'text' | 'image' | 'binary';

function kindOf(response: HttpGetResult): BodyKind {
  const { mimeType, body } = response;
  if (HTML_TYPES.has(mimeType)) return 'html';
  if (isTextType(mimeType)) return 'text';
  if (IMAGE_TYPES.has(mimeType) || (mimeType.startsWith('image/') && sniffImageFormat(body))) return 'image';
  if (mimeType === '' || mimeType === 'application/octet-stream') {
    // No usable type: look at the bytes.
    if (sniffImageFormat(body)) return 'image';
    const start = body.subarray(0, 8_192);
    if (!start.includes(0))
      return /^\s*<(!doctype html|html)/i.test(start.toString('latin1')) ? 'html' : 'text';
  }
  return 'binary';
}

function readable(response: HttpGetResult, kind: 'html' | 'text'): { title?: string; text: string } {
  const text = decode(response.body, response.charset);
  return kind === 'html' ? htmlToReadableText(text, response.url) : { text };
}

function decode(body: Buffer, charset = 'utf-8'): string {
  try {
    return new TextDecoder(charset).decode(body);
  } catch {
    // An unknown charset label: UTF-8 is the best guess.
    return new TextDecoder('utf-8').decode(body);
  }
}

function errorKindOf(status: number): 'FileNotFound' | 'PermissionDenied' | 'ExecutionFailed' {
  if (status === 404 || status === 410) return 'FileNotFound';
  if (status === 401 || status === 403) return 'PermissionDenied';
  return 'ExecutionFailed';
}
