import type { ResolvedActivityDeps } from '../activities/create-activities';
import { fleetModelLimiter } from '../activities/model-lease';
import { modelSettingsFromEnv } from '../activities/models/model-settings';
import { workerModelOf } from '../activities/models/model-wires';
import { modelLimiterFromEnv } from './model-limit-settings';
import { modelPricesFromEnv } from './model-prices-settings';
import { modelStreamTimeoutsFromEnv } from './model-stream-timeouts-settings';

/** What the model activities need, as the environment configures it. */
export type ModelDepsFromEnv = Pick<
  ResolvedActivityDeps,
  'defaultModel' | 'provider' | 'api' | 'wires' | 'prices' | 'streamTimeouts' | 'limiter'
>;

/**
 * The model side of a worker from `env`, built once when it starts: the endpoint and its API's
 * client (only that API's SDK is loaded), the price table, when a quiet endpoint is given up on,
 * and the fleet's limits. A setting that is wrong, or no model at all, throws here.
 */
export async function modelDepsFromEnv(env: NodeJS.ProcessEnv): Promise<ModelDepsFromEnv> {
  const settings = modelSettingsFromEnv(env);
  if (!settings) throw new Error('no model is configured');
  const limiter = modelLimiterFromEnv(env);
  const prices = modelPricesFromEnv(env);
  const streamTimeouts = modelStreamTimeoutsFromEnv(env);
  return {
    ...(await workerModelOf(settings)),
    ...(prices ? { prices } : {}),
    streamTimeouts,
    ...(limiter ? { limiter: fleetModelLimiter(limiter) } : {}),
  };
}
