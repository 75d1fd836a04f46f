import { connectionSettingsFromEnv } from '../client/connection-settings-from-env';
import type { ConnectionSettings } from '../shared/connection-settings';
import type { ToolSource } from '../tools/tool-source';
import { builtinTools } from '../tools/builtin/builtin-tools';
import { sandboxAvailability } from '../tools/exec/bubblewrap';
import { childEnvironment } from '../tools/exec/child-environment';
import { commandCgroupsFor, processLimitStatus } from '../tools/exec/command-cgroups';
import { ToolRegistry } from '../tools/registry';
import { ToolCircuitBreakers } from '../tools/circuit-breaker';
import { circuitBreakerSettingsFromEnv } from './circuit-breaker-settings';
import { connectWorker } from './connect';
import type { Tracing } from './tracing';
import { ensureSearchAttributes } from '../temporal-server/search-attribute-registration';
import { STICKY_QUEUE_TIMEOUT_MS, createAgentWorker } from './create-worker';
import { localToolsFromEnv } from './local-tools-settings';
import { deploymentVersionFromEnv } from './deployment-settings';
import { wholeNumberFromEnv } from './env-number';
import { execEnvPassFromEnv, execLimitsFromEnv, execPolicyFromEnv } from './exec-settings';
import { externalToolsFromEnv } from './external-tools';
import { approvalPolicyFromEnv } from './approval-policy-settings';
import { approverKeysFromEnv, floorsFromEnv } from './floor-settings';
import { liveEndpointFromEnv } from './live-endpoint-settings';
import { dailyTokenBudgetsFromEnv } from './daily-budget-settings';
import { modelDepsFromEnv } from './model-deps-from-env';
import { webFetchOptionsFromEnv } from './web-fetch-settings';
import { a2aPushAllowPrivateFromEnv, webhooksFromEnv } from './webhook-settings';
import { toolPolicyFromEnv } from './worker-tool-policy';

/**
 * How long a stopping worker lets running activities finish before cancelling them, in ms: the
 * longest tool category timeout, so a deploy does not cut off a conversation's command mid-way.
 */
const SHUTDOWN_GRACE_MS = 300_000;

/** A worker started from the environment, running. */
export interface RunningWorker {
  /** Settles when the worker has stopped. */
  done: Promise<void>;
  /** Stops taking work, lets running activities of other conversations finish, then lets go of everything. */
  stop(): Promise<void>;
  /** Whether it polls its task queue now: not yet while starting, no longer once stopping. */
  polling(): boolean;
}

/** Where a worker from the environment connects, what it reads, and what else it is given. */
export interface WorkerFromEnvOptions {
  /**
   * Namespace, task queue and the rest of the connection settings; by default read from `env` as
   * Temporal's tools read them (a `temporal.toml` profile, TEMPORAL_* variables: connectionSettingsFromEnv).
   */
  settings?: ConnectionSettings;
  /** The Temporal frontend, host:port; by default the settings' address. */
  address?: string;
  /** The workspace of conversations that name none. */
  workspace: string;
  /** The environment the model, tools, floors, keys and webhooks are read from. */
  env: NodeJS.ProcessEnv;
  /** Where the worker says what it is doing. */
  log: (message: string) => void;
  /** Tool sources besides those the environment configures (the MCP servers an editor names). */
  moreSources?: readonly ToolSource[];
  /** Traces of this worker's workflows and activities; off when absent. */
  tracing?: Tracing;
}

/**
 * A worker assembled from `env`, as the `worker`, `run` and `acp` commands start it: the model, the
 * built-in tools with the exec policy and the command environment, MCP and RAP tool sources, the
 * tool policy, the floors, approver keys and webhooks. A setting that is wrong stops it here.
 */
export async function startWorkerFromEnv(options: WorkerFromEnvOptions): Promise<RunningWorker> {
  const { workspace, env, log, moreSources = [], tracing } = options;
  const settings = options.settings ?? connectionSettingsFromEnv(env, log);
  const address = options.address ?? settings.address;
  if (!address) {
    throw new Error(
      `no Temporal address in ${settings.source}: set TEMPORAL_ADDRESS, or name a profile with one (TEMPORAL_PROFILE, TEMPORAL_CONFIG_FILE)`,
    );
  }
  const model = await modelDepsFromEnv(env);
  const liveEndpoint = liveEndpointFromEnv(env);
  const deployment = deploymentVersionFromEnv(env);
  const dailyTokenBudgets = dailyTokenBudgetsFromEnv(env);
  const external = await externalToolsFromEnv(env, settings, address, log);
  const execPolicy = execPolicyFromEnv(env);
  if (execPolicy.security === 'sandbox') {
    const available = sandboxAvailability();
    if (!available.ok) throw new Error(`AGENT_EXEC_SECURITY=sandbox needs bubblewrap: ${available.reason}`);
  }
  const execLimits = execLimitsFromEnv(env);
  // Made now, so the worker says at start whether a command's process limit binds (a path that cannot be used stops it).
  const processLimit = processLimitStatus(commandCgroupsFor(execLimits.cgroup));
  log(
    processLimit.binds
      ? `exec: ${processLimit.text}`
      : `exec: WARNING: a command's process limit does not bind here: ${processLimit.text}`,
  );
  const approverKeys = approverKeysFromEnv(env);
  const approvalPolicy = approvalPolicyFromEnv(env, approverKeys);
  const runtime = {
    ...execPolicy,
    childEnv: childEnvironment(env, execEnvPassFromEnv(env)),
    limits: execLimits,
  };
  const tools = new ToolRegistry(builtinTools({ runtime, webFetch: webFetchOptionsFromEnv(env) }), [
    ...external.sources,
    ...moreSources,
  ]);
  const circuitBreakers = new ToolCircuitBreakers(circuitBreakerSettingsFromEnv(env));
  const connection = await connectWorker(settings, address, log);
  const searchAttributes = await ensureSearchAttributes(connection, settings.namespace, log);
  const worker = await createAgentWorker({
    connection,
    namespace: settings.namespace,
    taskQueue: settings.taskQueue,
    activities: {
      ...model,
      tools,
      circuitBreakers,
      searchAttributes,
      localTools: localToolsFromEnv(env),
      defaultWorkspace: workspace,
      rapToolsets: external.rapToolsets,
      floors: floorsFromEnv(env, { workspace, execSecurity: execPolicy.security ?? 'full' }),
      ...(approverKeys ? { approverKeys } : {}),
      ...(approvalPolicy ? { approvalPolicy } : {}),
      ...(dailyTokenBudgets ? { dailyTokenBudgets } : {}),
      webhooks: webhooksFromEnv(env),
      a2aPush: { allowPrivateNetwork: a2aPushAllowPrivateFromEnv(env) },
      ...(env.DURABLE_AGENT_GATEWAY_URL ? { gatewayUrl: env.DURABLE_AGENT_GATEWAY_URL } : {}),
    },
    toolPolicy: toolPolicyFromEnv(env),
    shutdownGraceTimeMs: wholeNumberFromEnv(env, 'AGENT_SHUTDOWN_GRACE_MS', SHUTDOWN_GRACE_MS, 0),
    stickyQueueTimeoutMs: wholeNumberFromEnv(
      env,
      'AGENT_STICKY_QUEUE_TIMEOUT_MS',
      STICKY_QUEUE_TIMEOUT_MS,
      1,
    ),
    ...(tracing ? { tracing } : {}),
    ...(liveEndpoint ? { liveEndpoint } : {}),
    ...(deployment ? { deployment } : {}),
  });
  if (deployment) {
    log(
      `worker deployment ${deployment.deploymentName}, build ${deployment.buildId}: conversations stay on the build they started on`,
    );
  }
  await external.start();
  const done = worker.run();
  return {
    done,
    polling: () => worker.isPolling(),
    async stop() {
      const inFlight = worker.inFlightActivities();
      if (inFlight > 0) {
        log(
          `Letting ${inFlight} running activities of other conversations finish before exiting (Ctrl-C again stops now).`,
        );
      }
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await done.catch(() => undefined);
      await tools.close();
      await external.stop();
      await connection.close();
    },
  };
}
