import type { A2ACardSettings } from '../../shared/a2a';
import type { GatewayAccess } from '../gateway-access';
import type { GatewayDeps } from '../gateway-deps';
import type { A2AMetrics } from './a2a-metrics';

/** What every A2A method works with: the gateway's client and limits, its access checks, the card, its metrics. */
export interface A2AContext {
  deps: GatewayDeps;
  access: GatewayAccess;
  card: A2ACardSettings;
  metrics: A2AMetrics;
}
