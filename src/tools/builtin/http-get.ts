import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { BlockedAddressError, isPublicAddress, publicOnlyLookup } from './network-guard';
import { ToolError } from '../tool-error';

export interface HttpGetOptions {
  /** Bytes of (decompressed) body kept; reading stops there. */
  maxBytes: number;
  /** For the whole exchange, redirects and body included. */
  timeoutMs: number;
  maxRedirects: number;
  /** Lets requests reach loopback, private and link-local addresses (tests, intranets). */
  allowPrivateNetwork: boolean;
  /** The caller's cancellation: its reason is rethrown as is. */
  signal: AbortSignal;
  userAgent: string;
  /** Refuses a redirect to another host (PermissionDenied, naming where it pointed). */
  sameHostRedirectsOnly?: boolean;
}

export interface HttpGetResult {
  /** After redirects. */
  url: string;
  status: number;
  statusText: string;
  headers: IncomingHttpHeaders;
  /** The MIME type, lower case, without parameters; empty when the server sent none. */
  mimeType: string;
  charset?: string;
  body: Buffer;
  /** The body was longer than `maxBytes` and was cut there. */
  truncated: boolean;
  redirects: string[];
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** An http or https URL, or a ToolError saying why not. */
export function parseHttpUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ToolError('InvalidArgs', `not a URL: ${JSON.stringify(text.slice(0, 200))}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ToolError('InvalidArgs', `only http and https URLs can be fetched, not ${url.protocol}`);
  }
  if (url.username || url.password) {
    throw new ToolError('InvalidArgs', 'URLs with credentials (user:password@) are not fetched');
  }
  return url;
}

/**
 * A GET that follows at most `maxRedirects` redirects (each to http or https only), gives up after
 * `timeoutMs`, keeps at most `maxBytes` of the decompressed body, and unless allowed reaches only
 * public addresses (checked on the addresses actually connected to). Failures are ToolErrors:
 * Timeout, PermissionDenied for a non-public address, InvalidArgs for a bad URL, ExecutionFailed
 * for the rest. Non-2xx answers are returned, not thrown.
 */
export async function httpGet(rawUrl: string, options: HttpGetOptions): Promise<HttpGetResult> {
  let url = parseHttpUrl(rawUrl);
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = AbortSignal.any([options.signal, timeout]);
  const redirects: string[] = [];
  try {
    for (;;) {
      const host = url.hostname.replace(/^\[|\]$/g, '');
      if (!options.allowPrivateNetwork && isIpLiteral(host) && !isPublicAddress(host)) {
        throw new BlockedAddressError(host, host);
      }
      const response = await request(url, options, signal);
      const status = response.statusCode ?? 0;
      const location = response.headers.location;
      if (REDIRECTS.has(status) && location) {
        response.destroy();
        if (redirects.length >= options.maxRedirects) {
          throw new ToolError(
            'ExecutionFailed',
            `more than ${options.maxRedirects} redirects, the last to ${location}`,
          );
        }
        const next = parseHttpUrl(new URL(location, url).href);
        if (options.sameHostRedirectsOnly && next.hostname !== url.hostname) {
          throw new ToolError(
            'PermissionDenied',
            `${url.href} redirects to another host (${next.href}); fetch that URL itself if you need it`,
          );
        }
        url = next;
        redirects.push(url.href);
        continue;
      }
      const { body, truncated } = await readBody(response, options.maxBytes, signal);
      const [mimeType = '', ...parameters] = (response.headers['content-type'] ?? '')
        .split(';')
        .map((part) => part.trim());
      const charset = parameters
        .find((parameter) => /^charset=/i.test(parameter))
        ?.slice('charset='.length)
        .replace(/^"|"$/g, '');
      return {
        url: url.href,
        status,
        statusText: response.statusMessage ?? '',
        headers: response.headers,
        mimeType: mimeType.toLowerCase(),
        ...(charset ? { charset } : {}),
        body,
        truncated,
        redirects,
      };
    }
  } catch (error) {
    if (options.signal.aborted) throw options.signal.reason;
    if (timeout.aborted) {
      throw new ToolError(
        'Timeout',
        `no complete answer from ${url.href} within ${options.timeoutMs / 1_000} s`,
      );
    }
    if (error instanceof ToolError) throw error;
    if (error instanceof BlockedAddressError) {
      throw new ToolError('PermissionDenied', `${error.message}: web_fetch reaches public addresses only`);
    }
    throw new ToolError('ExecutionFailed', `fetching ${url.href} failed: ${(error as Error).message}`);
  }
}

function isIpLiteral(host: string): boolean {
  return /^[\d.]+$/.test(host) || host.includes(':');
}

function request(url: URL, options: HttpGetOptions, signal: AbortSignal): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const client = url.protocol === 'https:' ? https : http;
    const outgoing = client.request(
      url,
      {
        method: 'GET',
        signal,
        // No pooled sockets: each fetch is checked and connected on its own.
        agent: false,
        headers: {
          'user-agent': options.userAgent,
          accept:
            'text/html,application/xhtml+xml,application/json;q=0.9,text/*;q=0.9,image/*;q=0.8,*/*;q=0.5',
          'accept-encoding': 'gzip, deflate, br',
        },
        ...(options.allowPrivateNetwork ? {} : { lookup: publicOnlyLookup }),
      },
      resolve,
    );
    outgoing.on('error', reject);
    outgoing.end();
  });
}

/** The body, decompressed, cut at `maxBytes`: reading stops there, so a huge (or endless) body costs no more. */
function readBody(
  response: IncomingMessage,
  maxBytes: number,
  signal: AbortSignal,
): Promise<{ body: Buffer; truncated: boolean }> {
  const encoding = (response.headers['content-encoding'] ?? '').trim().toLowerCase();
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? createGunzip()
      : encoding === 'deflate'
        ? createInflate()
        : encoding === 'br'
          ? createBrotliDecompress()
          : undefined;
  const stream: Readable = decoder ? response.pipe(decoder) : response;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let settled = false;
    const finish = (outcome: { body: Buffer; truncated: boolean } | Error) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      response.destroy();
      decoder?.destroy();
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    const onAbort = () => finish(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    stream.on('data', (chunk: Buffer) => {
      const room = maxBytes - bytes;
      if (chunk.length > room) {
        chunks.push(chunk.subarray(0, room));
        bytes = maxBytes;
        finish({ body: Buffer.concat(chunks), truncated: true });
        return;
      }
      chunks.push(chunk);
      bytes += chunk.length;
    });
    stream.on('end', () => finish({ body: Buffer.concat(chunks), truncated: false }));
    stream.on('error', (error) => finish(error));
    response.on('error', (error) => finish(error));
    response.on('aborted', () => finish(new Error('the server closed the connection mid-body')));
  });
}
