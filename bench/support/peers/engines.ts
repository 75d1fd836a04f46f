import type { BenchContext } from '../context';
import type { PeerEngine } from './engine';
import { restateEngine } from './restate-engine';
import { aiSdkEngine, durableAgentEngine } from './temporal-engines';

/** The engines of the peer comparison, durable-agent first, and how to stop what they share. */
export function peerEngines(context: BenchContext): { list: PeerEngine[]; stopShared(): Promise<void> } {
  // BENCH_PEERS=ai-sdk-peer,restate measures only those (while working on one of them).
  const only = process.env.BENCH_PEERS?.split(',').filter(Boolean);
  const all = [durableAgentEngine(context), aiSdkEngine(context), restateEngine(context)];
  return {
    list: only ? all.filter((engine) => only.includes(engine.name)) : all,
    stopShared: async () => undefined,
  };
}
