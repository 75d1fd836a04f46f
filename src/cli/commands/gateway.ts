import { readFileSync } from 'node:fs';
import type { Server as TlsServer } from 'node:tls';
import { parseArgs } from 'node:util';
import type { MetricMeter } from '@temporalio/common';
import {
  type CertificatePair,
  followCertificateFiles,
  readCertificatePair,
} from '../../platform/certificate-files';
import { isLoopbackHost } from '../../platform/loopback-host';
import { type A2ACardSettings, A2ACardSettingsSchema } from '../../shared/a2a';
import { schemaProblems } from '../../shared/schema-problems';
import { type Cleanups, log } from '../cleanups';
import { connectAgent } from '../connect-agent';
import { UsageError } from '../usage-error';
import { a2aPushAllowPrivateFromEnv } from '../../worker/webhook-settings';
import type { MetricsEndpoint } from '../../worker/metrics-endpoint';

/**
 * `gateway`: the HTTP gateway for services, on 127.0.0.1 unless told otherwise. Tokens come from
 * `--tokens FILE` or DURABLE_AGENT_GATEWAY_TOKENS; DURABLE_AGENT_GATEWAY_SIGNING_KEY (an Ed25519
 * private key, PEM) makes it sign decisions as each token's identity. `--max-streams N` (or
 * DURABLE_AGENT_GATEWAY_MAX_STREAMS, default 8) caps the event streams one token may have open.
 * `--trust-proxy ADDRESSES` (or DURABLE_AGENT_GATEWAY_TRUST_PROXY) names the TLS proxy in front,
 * whose forwarded protocol and host the gateway then believes. `--tls-cert FILE --tls-key FILE` (or
 * DURABLE_AGENT_GATEWAY_TLS_CERT and _KEY, PEM) make it serve HTTPS itself; without them it serves
 * plain HTTP, and says so when it listens beyond loopback with no TLS proxy named in front. A
 * certificate renewed in those files is served within a second, with no restart. `--a2a-card FILE` (or
 * DURABLE_AGENT_A2A_CARD) describes the agent on the A2A card: name, description, skills, agentId.
 * `--metrics-port PORT` (or DURABLE_AGENT_METRICS_PORT) serves its A2A series on Prometheus' `/metrics`,
 * as a worker serves its own.
 */
export async function gatewayCommand(args: string[], cleanups: Cleanups): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      tokens: { type: 'string' },
      'max-streams': { type: 'string' },
      'trust-proxy': { type: 'string' },
      'tls-cert': { type: 'string' },
      'tls-key': { type: 'string' },
      'a2a-card': { type: 'string' },
      'metrics-port': { type: 'string' },
    },
  });
  const tokensFile = values.tokens ?? process.env.DURABLE_AGENT_GATEWAY_TOKENS;
  if (!tokensFile)
    throw new UsageError('gateway needs a token file: --tokens FILE or DURABLE_AGENT_GATEWAY_TOKENS');
  const port = Number(values.port ?? process.env.DURABLE_AGENT_GATEWAY_PORT ?? 8787);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new UsageError(`not a port: ${values.port}`);
  const host = values.host ?? process.env.DURABLE_AGENT_GATEWAY_HOST ?? '127.0.0.1';
  const maxStreamsText = values['max-streams'] ?? process.env.DURABLE_AGENT_GATEWAY_MAX_STREAMS;
  const maxStreamsPerToken = maxStreamsText === undefined ? undefined : Number(maxStreamsText);
  if (maxStreamsPerToken !== undefined && (!Number.isInteger(maxStreamsPerToken) || maxStreamsPerToken < 1))
    throw new UsageError(`--max-streams takes a whole number of at least 1, not ${maxStreamsText}`);
  const [{ GatewayTokens }, { createGateway }, { readSigningKey }, { parseTrustedProxies }] =
    await Promise.all([
      import('../../gateway/gateway-tokens'),
      import('../../http/gateway-app'),
      import('../../client/sign-decision'),
      import('../../http/trusted-proxies'),
    ]);
  const trustProxyText = values['trust-proxy'] ?? process.env.DURABLE_AGENT_GATEWAY_TRUST_PROXY;
  let trustedProxies: string[] | undefined;
  try {
    trustedProxies = trustProxyText === undefined ? undefined : parseTrustedProxies(trustProxyText);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const tlsFiles = gatewayTlsFiles(values['tls-cert'], values['tls-key']);
  let tls: CertificatePair | undefined;
  try {
    tls = tlsFiles && readCertificatePair(tlsFiles.certFile, tlsFiles.keyFile);
  } catch (error) {
    throw new UsageError(`--tls-cert, --tls-key: ${(error as Error).message}`);
  }
  const tokens = GatewayTokens.fromFile(tokensFile);
  const cardFile = values['a2a-card'] ?? process.env.DURABLE_AGENT_A2A_CARD;
  const a2aCard = cardFile === undefined ? undefined : readA2ACard(cardFile);
  const keyFile = process.env.DURABLE_AGENT_GATEWAY_SIGNING_KEY;
  const signingKey = keyFile ? readSigningKey(keyFile) : undefined;
  const metricMeter = await gatewayMetricMeter(args);
  const { agent, settings } = await connectAgent(cleanups, { startServer: false });
  const webUiBase = process.env.DURABLE_AGENT_WEB_UI_URL?.replace(/\/+$/, '');
  const app = createGateway({
    agent,
    tokens,
    ...(signingKey ? { signingKey } : {}),
    ...(maxStreamsPerToken !== undefined ? { maxStreamsPerToken } : {}),
    ...(trustedProxies ? { trustedProxies } : {}),
    ...(tls ? { tls } : {}),
    ...(a2aCard ? { a2aCard } : {}),
    ...(a2aPushAllowPrivateFromEnv(process.env) ? { a2aPushAllowPrivate: true } : {}),
    ...(metricMeter ? { metricMeter } : {}),
    ...(webUiBase ? { webUi: { baseUrl: webUiBase, namespace: settings.namespace } } : {}),
  });
  const address = await app.listen({ port, host });
  cleanups.first(() => app.close());
  if (tlsFiles) {
    // A certificate renewed on disk is served from the next handshake on.
    const server = app.server as unknown as TlsServer;
    const stop = followCertificateFiles(
      tlsFiles.certFile,
      tlsFiles.keyFile,
      (pair) => server.setSecureContext(pair),
      log,
    );
    cleanups.first(async () => stop());
  }
  if (!tls && !trustedProxies?.length && !isLoopbackHost(host))
    log(
      `warning: the gateway serves plain HTTP on ${host}: tokens and console sessions cross the network readable; give it --tls-cert and --tls-key, or name the TLS proxy in front with --trust-proxy`,
    );
  // The line a supervisor (or a test) waits for.
  log(`gateway listening on ${address}`);
  await new Promise<void>((resolve) => app.server.once('close', () => resolve()));
  return 0;
}

/**
 * With a metrics port, the Temporal runtime's Prometheus endpoint (as a worker's) and its meter, which
 * the gateway records its series through; none without.
 */
async function gatewayMetricMeter(args: string[]): Promise<MetricMeter | undefined> {
  const { metricsEndpointFrom, prometheusTelemetry } = await import('../../worker/metrics-endpoint');
  let metrics: MetricsEndpoint | undefined;
  try {
    metrics = metricsEndpointFrom(args, process.env);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (!metrics) return undefined;
  const { Runtime } = await import('@temporalio/worker');
  Runtime.install({ telemetryOptions: { metrics: prometheusTelemetry(metrics) } });
  log(`metrics on http://${metrics.host}:${metrics.port}/metrics`);
  return Runtime.instance().metricMeter;
}

/** The certificate and key files to serve HTTPS with, from the flags or the environment; none for plain HTTP. */
function gatewayTlsFiles(
  certFlag: string | undefined,
  keyFlag: string | undefined,
): { certFile: string; keyFile: string } | undefined {
  const certFile = certFlag ?? process.env.DURABLE_AGENT_GATEWAY_TLS_CERT;
  const keyFile = keyFlag ?? process.env.DURABLE_AGENT_GATEWAY_TLS_KEY;
  if (!certFile && !keyFile) return undefined;
  if (!certFile || !keyFile)
    throw new UsageError('the gateway serves HTTPS with both --tls-cert FILE and --tls-key FILE, or neither');
  return { certFile, keyFile };
}

/** The A2A card's description of the agent, from a JSON file: refused at start, naming what is wrong. */
function readA2ACard(file: string): A2ACardSettings {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new UsageError(`cannot read the A2A card file ${file}: ${(error as Error).message}`);
  }
  const parsed = A2ACardSettingsSchema.safeParse(json);
  if (!parsed.success)
    throw new UsageError(`the A2A card file ${file} is wrong: ${schemaProblems(parsed.error)}`);
  return parsed.data;
}
