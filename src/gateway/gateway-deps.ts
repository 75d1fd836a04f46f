import type { KeyObject } from 'node:crypto';
import type { MetricMeter } from '@temporalio/common';
import type { AgentClient } from '../client/agent-client';
import type { A2ACardSettings } from '../shared/a2a';
import type { GatewayTokens } from './gateway-tokens';

/** What the gateway is built from: the client it serves through, its tokens, and its limits. */
export interface GatewayDeps {
  agent: AgentClient;
  tokens: GatewayTokens;
  /** Signs decisions as the token's identity, for workers that take signed decisions only. */
  signingKey?: KeyObject;
  /** Between two looks at a conversation while streaming its events, in ms. Default 200. */
  eventPollMs?: number;
  /** Event streams one token may have open at once; the next is refused with 429. Default 8. */
  maxStreamsPerToken?: number;
  /** Between two keep-alive comments of an event stream (each also rechecks the token), in ms. Default 15000. */
  keepAliveMs?: number;
  /**
   * The proxies in front of the gateway (addresses, CIDR ranges, or `loopback`): from them alone
   * the forwarded protocol and host are believed (`X-Forwarded-Proto`, `X-Forwarded-Host`), so a
   * console cookie is Secure behind a TLS proxy. None when absent: a request says nothing of itself.
   */
  trustedProxies?: readonly string[];
  /**
   * The certificate (with its chain) and private key, PEM, to serve HTTPS with; plain HTTP when
   * absent, for loopback or behind a TLS proxy. Over HTTPS the console's session cookie is Secure.
   */
  tls?: { cert: string | Buffer; key: string | Buffer };
  /** What the A2A agent card says of the agent (name, description, skills, the agent new contexts start for); a plain default when absent. */
  a2aCard?: A2ACardSettings;
  /**
   * A2A push notification URLs may name loopback, private and link-local addresses
   * (DURABLE_AGENT_A2A_PUSH_ALLOW_PRIVATE); refused when they do by default. The worker, which posts
   * them, has the same setting and checks again.
   */
  a2aPushAllowPrivate?: boolean;
  /** How long an A2A SendMessage (or CancelTask) waits for its task to end or want input before it answers, in ms. Default 60000. */
  a2aBlockingMs?: number;
  /** Where the gateway's series go (its Prometheus endpoint); nowhere when absent. */
  metricMeter?: MetricMeter;
  /** Where the console links a conversation to its page in the Temporal Web UI: `${baseUrl}/namespaces/NS/workflows/ID`. */
  webUi?: { baseUrl: string; namespace: string };
}

export const DEFAULT_MAX_STREAMS_PER_TOKEN = 8;
