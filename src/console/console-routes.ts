import type { FastifyInstance } from 'fastify';
import type { GatewayAccess } from '../gateway/gateway-access';
import type { GatewayDeps } from '../gateway/gateway-deps';
import { statusOf } from '../gateway/gateway-errors';
import { registerChangeRoutes } from './change-routes';
import { loadConsoleAssets } from './console-assets';
import { TemporalConsoleMarks } from './console-marks';
import type { ConsoleKit } from './console-kit';
import { ConsoleReads } from './console-reads';
import { secureHeaders } from './console-security';
import { ConsoleSessions } from './console-sessions';
import { type SafeHtml, html } from './html';
import { registerPageRoutes } from './page-routes';
import { registerRunRoutes } from './run-routes';
import { registerRunStreamRoute } from './run-stream-route';
import { SIGN_IN_PATH } from './sign-in-link';
import { registerSignInRoutes } from './sign-in-routes';

/**
 * The console: pages for the people who supervise agents, under the gateway's tokens. A person
 * signs in with a one-time link or their token and then acts as that token, seeing and doing
 * nothing it may not. Pages are rendered here and work without script; the console's one script
 * keeps their live regions current.
 */
export function registerConsoleRoutes(app: FastifyInstance, deps: GatewayDeps, access: GatewayAccess): void {
  const sessions = new ConsoleSessions(deps.tokens, new TemporalConsoleMarks(deps.agent.temporal));
  const reads = new ConsoleReads(deps.agent, access, deps.tokens);
  const assets = loadConsoleAssets();

  void app.register(async (routes) => {
    // Forms post urlencoded bodies; the /v1 API outside this plugin still takes JSON only.
    routes.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: 64 * 1024 },
      (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
    );
    routes.addHook('onSend', async (_request, reply) => secureHeaders(reply));
    routes.setErrorHandler((error: Error & { statusCode?: number }, request, reply) => {
      const [status, message] = statusOf(error);
      if (status === 401 && request.method === 'GET' && !request.url.startsWith('/console/live/'))
        return reply.redirect(SIGN_IN_PATH, 303);
      return reply
        .status(status)
        .type('text/html; charset=utf-8')
        .send(errorPage(status, message, assets.style.path).text);
    });
    for (const asset of [assets.script, assets.style])
      routes.get(asset.path, async (_request, reply) =>
        reply
          .type(asset.contentType)
          .header('cache-control', 'public, max-age=31536000, immutable')
          .send(asset.body),
      );

    const kit: ConsoleKit = { routes, deps, access, sessions, reads, assets };
    registerSignInRoutes(kit);
    registerPageRoutes(kit);
    registerChangeRoutes(kit);
    registerRunStreamRoute(kit);
    registerRunRoutes(kit);
  });
}

function errorPage(status: number, message: string, stylePath: string): SafeHtml {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <title>${status} · durable-agent</title>
        <link rel="stylesheet" href="${stylePath}" />
      </head>
      <body>
        <main>
          <h1>${status}</h1>
          <p class="error">${message}</p>
          <p><a href="/console">Back to the console</a></p>
        </main>
      </body>
    </html>`;
}
