import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
import sharp from 'sharp';
import { isPublicAddress } from '../../src/tools/builtin/network-guard';
import type { AgentTool, ToolResult } from '../../src/tools/tool';
import { createWebFetchTool, webFetchTool } from '../../src/tools/builtin/web-fetch';
import { Workspace } from '../../src/tools/workspace';
import { resultText, toolErrorOf } from './tool-harness';

/** A local server with one handler per path; everything here stays on 127.0.0.1. */
const routes: Record<string, http.RequestListener> = {};
const sockets = new Set<Socket>();
let server: http.Server;
let base: string;

beforeAll(async () => {
  server = http.createServer((request, response) => {
    const route = routes[new URL(request.url!, 'http://x').pathname];
    if (route) return route(request, response);
    response.writeHead(404, { 'content-type': 'text/plain' }).end('no such page here');
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => server.close(resolve));
});

const send =
  (type: string, body: string | Buffer, headers: Record<string, string> = {}): http.RequestListener =>
  (_request, response) =>
    response.writeHead(200, { 'content-type': type, ...headers }).end(body);

// The generous timeout is for a loaded CI machine (this file took 12 s there, 2 s here); the tests
// of the timeout itself use their own 300 ms tool.
const localTool = createWebFetchTool({ allowPrivateNetwork: true, maxBytes: 64 * 1024, timeoutMs: 60_000 });
const workspace = new Workspace(process.cwd());

function fetchWith(
  tool: AgentTool,
  args: unknown,
  signal = new AbortController().signal,
): Promise<ToolResult> {
  return tool.execute('call_1', tool.parameters.parse(args), signal, () => {}, {
    workspace,
    conversationId: 'c',
    agentId: 'default',
  });
}
const fetchUrl = (path: string, extra: Record<string, unknown> = {}) =>
  fetchWith(localTool, { url: `${base}${path}`, ...extra });

test('HTML comes back as readable text: no scripts or styles, a title, absolute links', async () => {
  routes['/page'] = send(
    'text/html; charset=utf-8',
    `<!doctype html><html><head><title>Release notes</title><style>body{color:red}</style>
     <script>window.secret = "do not show"</script></head>
     <body><h1>Version 2</h1><p>Read the <a href="/docs/guide">guide</a> &amp; enjoy.</p>
     <script>console.log("also hidden")</script><ul><li>fast</li><li>small</li></ul></body></html>`,
  );
  const result = await fetchUrl('/page');
  const text = resultText(result);
  expect(text).toContain(`URL: ${base}/page`);
  expect(text).toContain('Status: 200 OK');
  expect(text).toContain('Title: Release notes');
  expect(text).toContain('Version 2');
  expect(text).toContain(`Read the guide [${base}/docs/guide] & enjoy.`);
  expect(text).toMatch(/\* fast\n \* small/);
  expect(text).not.toMatch(/secret|hidden|color:red|<p>/);
  expect(result.details).toMatchObject({
    status: 200,
    mimeType: 'text/html',
    truncated: false,
    title: 'Release notes',
  });
});

test('JSON and plain text are returned as they are', async () => {
  const payload = JSON.stringify({ items: [1, 2], name: '<b>not html</b>' });
  routes['/data.json'] = send('application/json', payload);
  expect(resultText(await fetchUrl('/data.json'))).toContain(`\n\n${payload}`);
  routes['/problem'] = send('application/problem+json', '{"title":"x"}');
  expect(resultText(await fetchUrl('/problem'))).toContain('{"title":"x"}');
  routes['/notes.txt'] = send('text/plain', '<script>kept as text</script>');
  expect(resultText(await fetchUrl('/notes.txt'))).toContain('<script>kept as text</script>');
});

test('the charset of the content type is honoured', async () => {
  routes['/latin1'] = send('text/plain; charset=iso-8859-1', Buffer.from([0x63, 0x61, 0x66, 0xe9]));
  expect(resultText(await fetchUrl('/latin1'))).toContain('café');
});

test('compressed bodies are decompressed', async () => {
  routes['/gzip'] = send('text/plain', gzipSync('squeezed text'), { 'content-encoding': 'gzip' });
  expect(resultText(await fetchUrl('/gzip'))).toContain('squeezed text');
});

test('an endless body is read only up to the size limit', async () => {
  routes['/endless'] = (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain' });
    const chunk = 'y'.repeat(16 * 1024);
    const timer = setInterval(() => response.write(chunk), 1);
    response.on('close', () => clearInterval(timer));
  };
  const result = await fetchUrl('/endless');
  expect(result.details).toMatchObject({ truncated: true, bytes: 64 * 1024 });
  expect(resultText(result)).toContain('[the body was cut at 65536 bytes]');
});

test('max_chars cuts the text and says so', async () => {
  routes['/long'] = send('text/plain', 'z'.repeat(5_000));
  const text = resultText(await fetchUrl('/long', { max_chars: 1_000 }));
  expect(text).toContain(`${'z'.repeat(1_000)}\n\n[showing 1000 of 5000 characters]`);
  expect(text).not.toContain('z'.repeat(1_001));
});

test('a server that never answers hits the time limit', async () => {
  routes['/silent'] = () => {};
  const tool = createWebFetchTool({ allowPrivateNetwork: true, timeoutMs: 300 });
  const error = await toolErrorOf(fetchWith(tool, { url: `${base}/silent` }));
  expect(error.kind).toBe('Timeout');
  expect(error.message).toContain('within 0.3 s');
});

test('a body that stalls midway hits the time limit too', async () => {
  routes['/stall'] = (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.write('first part');
  };
  const tool = createWebFetchTool({ allowPrivateNetwork: true, timeoutMs: 300 });
  expect((await toolErrorOf(fetchWith(tool, { url: `${base}/stall` }))).kind).toBe('Timeout');
});

test('cancellation rejects with the activity’s own reason', async () => {
  routes['/slow'] = () => {};
  const controller = new AbortController();
  const reason = new Error('cancelled by the workflow');
  const cancelled = fetchWith(localTool, { url: `${base}/slow` }, controller.signal);
  setTimeout(() => controller.abort(reason), 50);
  await expect(cancelled).rejects.toBe(reason);
});

describe('redirects', () => {
  beforeAll(() => {
    routes['/final'] = send('text/plain', 'arrived');
    routes['/hop2'] = (_request, response) => response.writeHead(302, { location: '/final' }).end();
    routes['/hop1'] = (_request, response) => response.writeHead(301, { location: `${base}/hop2` }).end();
    routes['/loop'] = (_request, response) => response.writeHead(302, { location: '/loop' }).end();
    routes['/to-file'] = (_request, response) =>
      response.writeHead(302, { location: 'file:///etc/passwd' }).end();
    routes['/to-other-host'] = (_request, response) =>
      response.writeHead(302, { location: base.replace('127.0.0.1', 'localhost') + '/final' }).end();
  });

  test('to another host are refused: approval holds for one host', async () => {
    const error = await toolErrorOf(fetchUrl('/to-other-host'));
    expect(error.kind).toBe('PermissionDenied');
    expect(error.message).toMatch(/redirects to another host \(http:\/\/localhost:\d+\/final\)/);
  });

  test('are followed, and the final URL is reported', async () => {
    const result = await fetchUrl('/hop1');
    expect(resultText(result)).toContain(`URL: ${base}/final`);
    expect(resultText(result)).toContain('arrived');
    expect(result.details).toMatchObject({ redirects: [`${base}/hop2`, `${base}/final`] });
  });

  test('are bounded', async () => {
    const error = await toolErrorOf(fetchUrl('/loop'));
    expect(error.kind).toBe('ExecutionFailed');
    expect(error.message).toMatch(/more than 5 redirects/);
  });

  test('to other schemes are refused', async () => {
    const error = await toolErrorOf(fetchUrl('/to-file'));
    expect(error.kind).toBe('InvalidArgs');
    expect(error.message).toMatch(/only http and https/);
  });
});

test.each([
  ['file:///etc/passwd', /only http and https URLs can be fetched, not file:/],
  ['ftp://example.com/x', /not ftp:/],
  ['javascript:alert(1)', /not javascript:/],
  ['data:text/plain,hi', /not data:/],
  ['not a url', /not a URL/],
  ['http://user:secret@example.com/', /credentials/],
])('%s is refused without any request', async (url, message) => {
  const error = await toolErrorOf(fetchWith(webFetchTool, { url }));
  expect(error.kind).toBe('InvalidArgs');
  expect(error.message).toMatch(message);
});

describe('by default only public addresses are reached', () => {
  test.each([
    'http://127.0.0.1:1/',
    'http://[::1]:1/',
    'http://169.254.169.254/latest/meta-data/',
    'http://10.0.0.1/',
    'http://0.0.0.0:1/',
  ])('%s is refused', async (url) => {
    const error = await toolErrorOf(fetchWith(webFetchTool, { url }));
    expect(error.kind).toBe('PermissionDenied');
    expect(error.message).toMatch(/private, loopback or reserved/);
  });

  test('a name that resolves to loopback is refused when it is looked up', async () => {
    const port = (server.address() as AddressInfo).port;
    const error = await toolErrorOf(fetchWith(webFetchTool, { url: `http://localhost:${port}/page` }));
    expect(error.kind).toBe('PermissionDenied');
    expect(error.message).toMatch(/localhost resolves to/);
  });

  test.each([
    ['8.8.8.8', true],
    ['2606:4700:4700::1111', true],
    ['127.0.0.1', false],
    ['10.1.2.3', false],
    ['172.20.0.1', false],
    ['192.168.1.1', false],
    ['169.254.169.254', false],
    ['100.64.0.1', false],
    ['::1', false],
    ['fe80::1', false],
    ['fd00::1', false],
    ['::ffff:127.0.0.1', false],
    ['::ffff:10.0.0.1', false],
    ['224.0.0.1', false],
    ['not-an-ip', false],
  ])('isPublicAddress(%s) is %s', (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected);
  });
});

test('error statuses are errors the model reads, with the start of the body', async () => {
  const missing = await toolErrorOf(fetchUrl('/nowhere'));
  expect(missing.kind).toBe('FileNotFound');
  expect(missing.message).toBe(`${base}/nowhere answered 404 Not Found: no such page here`);
  routes['/forbidden'] = (_request, response) => response.writeHead(403).end();
  expect((await toolErrorOf(fetchUrl('/forbidden'))).kind).toBe('PermissionDenied');
  routes['/broken'] = (_request, response) =>
    response.writeHead(500, { 'content-type': 'text/html' }).end('<p>oops</p>');
  const broken = await toolErrorOf(fetchUrl('/broken'));
  expect(broken.kind).toBe('ExecutionFailed');
  expect(broken.message).toMatch(/500 Internal Server Error: oops$/);
});

test('an image comes back as an image the model can see, within the image limits', async () => {
  routes['/picture.png'] = send(
    'image/png',
    await sharp({ create: { width: 2_400, height: 600, channels: 3, background: '#336699' } })
      .png()
      .toBuffer(),
  );
  const tool = createWebFetchTool({ allowPrivateNetwork: true });
  const result = await fetchWith(tool, { url: `${base}/picture.png` });
  expect(result.content[0]).toMatchObject({
    type: 'text',
    text: expect.stringContaining('Content-Type: image/png'),
  });
  const image = result.content[1];
  expect(image).toMatchObject({ type: 'image', mimeType: 'image/png' });
  const metadata = await sharp(Buffer.from((image as { data: string }).data, 'base64')).metadata();
  expect([metadata.width, metadata.height]).toEqual([2_000, 500]);
});

test('other binary content is described, not shown', async () => {
  routes['/file.pdf'] = send('application/pdf', Buffer.from('%PDF-1.7\u0000\u0001binary'));
  const text = resultText(await fetchUrl('/file.pdf'));
  expect(text).toContain('[application/pdf content, 16 bytes: not text, not shown]');
  expect(text).not.toContain('%PDF');
  routes['/unknown'] = send('application/octet-stream', Buffer.from([0, 1, 2, 3]));
  expect(resultText(await fetchUrl('/unknown'))).toContain('not text, not shown');
});

test('untyped text is sniffed as text', async () => {
  routes['/untyped'] = (_request, response) => {
    response.removeHeader('content-type');
    response.end('just words');
  };
  expect(resultText(await fetchUrl('/untyped'))).toContain('just words');
});

test('web_fetch is a low-risk, idempotent tool', () => {
  expect([webFetchTool.risk, webFetchTool.idempotent]).toEqual(['low', true]);
});
