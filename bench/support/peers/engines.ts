import type { BenchContext } from '../context';
import { type BenchPostgres, startBenchPostgres } from './bench-postgres';
import { dbosEngine } from './dbos-engine';
import type { PeerEngine } from './engine';
import { langGraphEngine } from './langgraph-engine';
import { restateEngine } from './restate-engine';
import { aiSdkEngine, durableAgentEngine } from './temporal-engines';

/**
 * The engines of the peer comparison, durable-agent first, and how to stop what they share: the
 * PostgreSQL of DBOS and LangGraph, started by the first of them that needs it.
 */
export function peerEngines(context: BenchContext): { list: PeerEngine[]; stopShared(): Promise<void> } {
  let postgres: Promise<BenchPostgres> | undefined;
  const sharedPostgres = () => {
    if (!postgres) {
      context.log('  starting PostgreSQL for DBOS and LangGraph ...');
      postgres = startBenchPostgres(context.log);
    }
    return postgres;
  };
  // BENCH_PEERS=restate,dbos measures only those (while working on one of them).
  const only = process.env.BENCH_PEERS?.split(',').filter(Boolean);
  const all = [
    durableAgentEngine(context),
    aiSdkEngine(context),
    restateEngine(context),
    dbosEngine(context, sharedPostgres),
    langGraphEngine(context, sharedPostgres),
  ];
  return {
    list: only ? all.filter((engine) => only.includes(engine.name)) : all,
    async stopShared() {
      const started = await postgres?.catch(() => undefined);
      await started?.stop();
    },
  };
}
