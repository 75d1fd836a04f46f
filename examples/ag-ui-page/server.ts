// The page's own server: it serves the page and passes each AG-UI run to the durable-agent gateway
// with its token, so the token never reaches the browser. Run it with
//   AG_UI_GATEWAY_URL=http://127.0.0.1:8787 AG_UI_TOKEN=... node --import tsx examples/ag-ui-page/server.ts
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { build } from 'esbuild';

export async function startPageServer(options: { gatewayUrl: string; token: string; port?: number }) {
  // The page's script, bundled once for the browser.
  const bundle = await build({
    entryPoints: [path.join(__dirname, 'page.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    write: false,
  });
  const script = bundle.outputFiles[0]!.text;
  const html = await readFile(path.join(__dirname, 'index.html'), 'utf8');
  const server = http.createServer((request, response) => {
    if (request.method === 'GET' && request.url === '/') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
    } else if (request.method === 'GET' && request.url === '/page.js') {
      response.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(script);
    } else if (request.method === 'POST' && request.url === '/ag-ui') {
      void forward(request, response, options);
    } else {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The run input to the gateway's AG-UI endpoint, its events streamed back as they come. */
async function forward(
  request: http.IncomingMessage,
  response: http.ServerResponse,
  options: { gatewayUrl: string; token: string },
) {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const upstream = await fetch(`${options.gatewayUrl}/v1/ag-ui`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${options.token}`,
      'content-type': 'application/json',
      accept: 'text/event-stream',
      ...(typeof request.headers['last-event-id'] === 'string'
        ? { 'last-event-id': request.headers['last-event-id'] }
        : {}),
    },
    body: Buffer.concat(chunks),
  }).catch(() => undefined);
  if (!upstream?.body) {
    response.writeHead(502).end();
    return;
  }
  response.writeHead(upstream.status, {
    'content-type': upstream.headers.get('content-type') ?? 'text/plain',
  });
  request.on('close', () => void upstream.body?.cancel().catch(() => undefined));
  const reader = upstream.body.getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) response.write(read.value);
  response.end();
}

if (require.main === module) {
  const gatewayUrl = process.env.AG_UI_GATEWAY_URL ?? 'http://127.0.0.1:8787';
  const token = process.env.AG_UI_TOKEN;
  if (!token) throw new Error('set AG_UI_TOKEN to a gateway token with start, send, approve and events');
  void startPageServer({ gatewayUrl, token, port: Number(process.env.PORT ?? 3000) }).then(({ url }) =>
    console.log(`the page is on ${url}`),
  );
}
