import { randomUUID } from 'node:crypto';
import { Connection } from '@temporalio/client';
import { preciseNow } from './support/clock';
import {
  type BenchContext,
  CLUSTER_SUFFIX,
  type MeasuredServer,
  serversToMeasure,
  withServer,
} from './support/context';
import { type DispatchProbe, probeDispatch } from './support/dispatch-probe';
import { DrivenConversation } from './support/driven-conversation';
import { InProcessLoop } from './support/floor';
import { type TurnBreakdown, breakdown } from './support/history';
import { type Stack, bareStack, durableStack, peerStack } from './support/stacks';
import { type Summary, round, summarize, table } from './support/stats';

type StackTurns = TurnOverheadResult['stacks'][string];
/** The dispatch probe and each stack's turns on one server. */
type ServerTurns = Pick<TurnOverheadResult, 'dispatch' | 'stacks'>;

const TRANSFER_READS = 'history.transferProcessorMaxPollRPS';

export interface TurnOverheadResult {
  turns: number;
  warmupTurns: number;
  floor: Summary;
  /** Task dispatch by the server alone: a workflow started while a plain client's poll waits. */
  dispatch: DispatchProbe;
  /** The same on the stock dev server. */
  stockDispatch?: DispatchProbe;
  /**
   * The probe and the same turns on the self-hosted cluster (PostgreSQL, four services, the same
   * dynamic config), when the run has one.
   */
  cluster?: ServerTurns;
  /**
   * On a dev server with Temporal's default `history.transferProcessorMaxPollRPS` (20) instead of
   * the project's (DEV_SERVER_DYNAMIC_CONFIG): what that setting buys.
   */
  stockServer: { turns: number; stacks: Record<string, StackTurns> };
  stacks: Record<
    string,
    {
      /** Message sent to run finished, as the client sees it. */
      turnMs: Summary;
      /** Message recorded to the workflow task that finished the run, by the server's clock. */
      serverTurnMs: Summary;
      /** `median(stack) - median(floor)` (and the same for p95), and the ratio of the medians. */
      addedMsMedian: number;
      addedMsP95: number;
      ratioMedian: number;
      /** Mean time per turn in each part, from history timestamps (server clock). */
      profile: {
        workflowTasks: number;
        workflowTaskQueueMs: number;
        workflowTaskRunMs: number;
        activities: Record<string, { count: number; queueMs: number; runMs: number }>;
      };
    }
  >;
  table: string;
}

function meanProfile(profiles: TurnBreakdown[]): TurnOverheadResult['stacks'][string]['profile'] {
  const n = profiles.length;
  const activities: Record<string, { count: number; queueMs: number; runMs: number }> = {};
  for (const profile of profiles) {
    for (const [type, entry] of Object.entries(profile.activities)) {
      const sum = (activities[type] ??= { count: 0, queueMs: 0, runMs: 0 });
      sum.count += entry.count / n;
      sum.queueMs += entry.queueMs / n;
      sum.runMs += entry.runMs / n;
    }
  }
  for (const entry of Object.values(activities)) {
    entry.count = round(entry.count);
    entry.queueMs = round(entry.queueMs);
    entry.runMs = round(entry.runMs);
  }
  return {
    workflowTasks: round(profiles.reduce((sum, p) => sum + p.workflowTasks, 0) / n),
    workflowTaskQueueMs: round(profiles.reduce((sum, p) => sum + p.workflowTaskQueueMs, 0) / n),
    workflowTaskRunMs: round(profiles.reduce((sum, p) => sum + p.workflowTaskRunMs, 0) / n),
    activities,
  };
}

async function measureStack(
  context: BenchContext,
  stack: Stack,
  warmup: number,
  turns: number,
): Promise<{ times: number[]; profiles: TurnBreakdown[] }> {
  const taskQueue = `bench-turn-${stack.name}-${randomUUID()}`;
  const worker = await stack.startWorker(taskQueue);
  try {
    const conversation = await DrivenConversation.start(
      context,
      stack,
      `turn-${stack.name}-${randomUUID()}`,
      taskQueue,
    );
    for (let i = 0; i < warmup; i++) await conversation.runTurn();
    const times: number[] = [];
    const profiles: TurnBreakdown[] = [];
    for (let i = 0; i < turns; i++) {
      const started = preciseNow();
      const events = await conversation.runTurn();
      times.push(preciseNow() - started);
      profiles.push(breakdown(events, conversation.typeOf));
    }
    return { times, profiles };
  } finally {
    await worker.stop();
  }
}

function dispatchRows(suffix: string, probed: DispatchProbe): Array<Array<string | number>> {
  return [
    [
      `poll waiting, workflow started: first 15 on a new connection${suffix}`,
      probed.fresh.median,
      probed.fresh.p95,
    ],
    [`the same, the 45 after those${suffix}`, probed.warm.median, probed.warm.p95],
  ];
}

/**
 * Bench 1: a turn is one model call that asks for the no-op tool, the tool, and the model call that
 * answers. Timed from sending the message to the run having finished in the workflow, against the
 * same loop in-process (the floor). On the embedded server, then the same on the cluster when the
 * run has one, then on a dev server with Temporal's default transfer queue reads.
 */
export async function turnOverhead(context: BenchContext): Promise<TurnOverheadResult> {
  const warmup = context.quick ? 3 : 5;
  const turns = context.quick ? 20 : 50;
  const stockTurns = context.quick ? 10 : 20;

  const floorLoop = new InProcessLoop(context.model.baseUrl);
  for (let i = 0; i < warmup; i++) await floorLoop.runTurn();
  const floorTimes: number[] = [];
  for (let i = 0; i < turns; i++) {
    const started = preciseNow();
    await floorLoop.runTurn();
    floorTimes.push(preciseNow() - started);
  }
  const floor = summarize(floorTimes);
  context.log(`  floor (in-process): median ${floor.median} ms`);

  const probe = async (address: string) => {
    const connection = await Connection.connect({ address });
    const probed = await probeDispatch(connection).finally(() => connection.close());
    context.log(`  server dispatch: median ${probed.fresh.median} ms fresh, ${probed.warm.median} ms warm`);
    return probed;
  };

  const measure = async (on: BenchContext, count: number) => {
    const stacks: Record<string, StackTurns> = {};
    for (const stack of [bareStack(on), durableStack(on), peerStack(on)]) {
      const { times, profiles } = await measureStack(on, stack, warmup, count);
      const turnMs = summarize(times);
      stacks[stack.name] = {
        turnMs,
        serverTurnMs: summarize(profiles.flatMap((profile) => profile.signalToEndMs ?? [])),
        addedMsMedian: round(turnMs.median - floor.median),
        addedMsP95: round(turnMs.p95 - floor.p95),
        ratioMedian: round(turnMs.median / floor.median, 1),
        profile: meanProfile(profiles),
      };
      context.log(`  ${stack.name}: median ${turnMs.median} ms`);
    }
    return stacks;
  };
  // The embedded server every bench shares, then the cluster: the same probe and turns on each.
  const measured: Partial<Record<MeasuredServer['name'], ServerTurns>> = {};
  for (const server of serversToMeasure(context)) {
    context.log(`  on the ${server.name}:`);
    const dispatch = await probe(server.context.address);
    measured[server.name] = { dispatch, stacks: await measure(server.context, turns) };
  }
  const onEmbedded = measured['embedded server']!;
  const result: TurnOverheadResult = {
    turns,
    warmupTurns: warmup,
    floor,
    dispatch: onEmbedded.dispatch,
    stacks: onEmbedded.stacks,
    ...(measured.cluster ? { cluster: measured.cluster } : {}),
    stockServer: { turns: stockTurns, stacks: {} },
    table: '',
  };
  // The experiment behind the explanation: the same turns where each shard's transfer queue is read
  // at most 20 times a second, Temporal's default.
  context.log(`  on a dev server with Temporal's default ${TRANSFER_READS}:`);
  await withServer(context, { [TRANSFER_READS]: 20 }, async (stock) => {
    result.stockDispatch = await probe(stock.address);
    result.stockServer.stacks = await measure(stock, stockTurns);
  });

  const rows: Array<Array<string | number>> = [
    ['in-process loop (floor)', floor.median, floor.p95, '1.0', '0', '0', '-', '-'],
  ];
  const profileRows: Array<Array<string | number>> = [];
  const addRows = (stacks: Record<string, StackTurns>, suffix: string) => {
    const bare = stacks['temporal-bare'];
    for (const [name, entry] of Object.entries(stacks)) {
      rows.push([
        `${name}${suffix}`,
        entry.turnMs.median,
        entry.turnMs.p95,
        entry.ratioMedian.toFixed(1),
        entry.addedMsMedian,
        entry.addedMsP95,
        entry.serverTurnMs.median,
        name === 'temporal-bare' || !bare ? '-' : round(entry.turnMs.median - bare.turnMs.median),
      ]);
      const activities = Object.entries(entry.profile.activities)
        .map(([type, a]) => `${type} ${a.count}x: ${a.queueMs} / ${a.runMs}`)
        .join('; ');
      profileRows.push([
        `${name}${suffix}`,
        entry.profile.workflowTasks,
        entry.profile.workflowTaskQueueMs,
        entry.profile.workflowTaskRunMs,
        activities,
      ]);
    }
  };
  addRows(result.stacks, '');
  if (result.cluster) addRows(result.cluster.stacks, CLUSTER_SUFFIX);
  addRows(result.stockServer.stacks, ' (stock dev server)');
  result.table = `${table(
    [
      'turn (model + no-op tool + model)',
      'median ms',
      'p95 ms',
      'x floor (median)',
      '+ms median',
      '+ms p95',
      'server-side median ms',
      '+ms over bare Temporal',
    ],
    rows,
  )}\n\n${table(
    [
      'where a turn goes (mean per turn, server clock)',
      'workflow tasks',
      'WFT queue ms',
      'WFT run ms',
      'activities: queue ms / run ms',
    ],
    profileRows,
  )}\n\n${table(
    ['Temporal server dispatch (plain gRPC client, no worker)', 'median ms', 'p95 ms'],
    [
      ...dispatchRows('', result.dispatch),
      ...(result.cluster ? dispatchRows(CLUSTER_SUFFIX, result.cluster.dispatch) : []),
      ...(result.stockDispatch ? dispatchRows(' (stock dev server)', result.stockDispatch) : []),
    ],
  )}`;
  return result;
}
