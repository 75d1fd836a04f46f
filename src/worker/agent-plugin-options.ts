import type { DataConverter } from '@temporalio/common';
import type { ActivityDeps, ResolvedActivityDeps } from '../activities/create-activities';
import type { ModelSettings } from '../activities/models/model-settings';
import { wiresOver, workerModelOf } from '../activities/models/model-wires';
import type { ToolPolicy } from '../shared/tool-policy';
import { type BuiltinToolDeps, builtinTools } from '../tools/builtin/builtin-tools';
import { ToolRegistry } from '../tools/registry';
import type { ToolSource } from '../tools/tool-source';
import type { LiveEndpointSettings } from './live-endpoint-settings';
import { type ToolChoice, selectTools } from './tool-selection';

/** How a durable-agent worker behaves as a Temporal worker; every field has a default. */
export interface AgentWorkerTuning {
  /** Activities this worker runs at once (model calls and tools together). Default 200. */
  maxConcurrentActivities?: number;
  /** How often heartbeat progress is sent at most, in ms. Default 1000, so watchers see progress each second. */
  heartbeatThrottleMs?: number;
  /**
   * On shutdown the worker stops taking work at once but lets running activities finish for this
   * long (ms) before cancelling them. Default 300000, the longest tool category timeout: a worker
   * that stops (a deploy, a `run` ending) does not cut off another conversation's tool mid-way.
   */
  shutdownGraceTimeMs?: number;
  /**
   * How long a workflow task waits on this worker's sticky queue (the worker that holds the
   * conversation in its cache) before any worker of the task queue may take it, in ms. Default
   * `STICKY_QUEUE_TIMEOUT_MS`.
   */
  stickyQueueTimeoutMs?: number;
  /**
   * The worker-wide (global) step of the tool policy pipeline: tools it denies, or does not allow,
   * are neither offered to any conversation nor run. Unknown entries are logged as warnings.
   */
  toolPolicy?: ToolPolicy;
  /**
   * The worker's push endpoint (model text for watchers elsewhere, knocks for cancel requests):
   * where it listens, the URL others reach it at, and its TLS (plain on loopback, else a
   * certificate it makes, unless given one). Off when absent.
   */
  liveEndpoint?: LiveEndpointSettings;
  /**
   * What this worker takes from the task queue: `all` (the default), `workflows` (conversations and
   * their local activities, no model or tool calls) or `activities` (model and tool calls only), for
   * fleets that run the two apart.
   */
  serves?: 'all' | 'workflows' | 'activities';
  /**
   * The data converter of a worker that sets none, and of clients the plugin is given to. Default:
   * `agentDataConverter()` from the environment (the large-payload codec). A worker that sets its
   * own keeps it; its clients need the same one.
   */
  dataConverter?: DataConverter;
  /**
   * For a worker that names no workflow code of its own: a workflow bundle built ahead of time
   * (default: the one `npm run build` writes, else the workflows are bundled at start).
   */
  workflowBundlePath?: string;
  /**
   * Bundle the workflows when the worker starts even when a prebuilt bundle exists: for workers
   * whose other plugins add modules to the workflow code (tracing), which a prebuilt bundle lacks.
   */
  bundleWorkflowsAtStart?: boolean;
}

/**
 * Everything a durable-agent worker needs, in one object: the model, the tools, and what the operator
 * holds conversations to. `activities` takes any dependency of the model and tool activities in
 * full and wins over the fields that build one.
 */
export interface AgentPluginOptions
  extends
    AgentWorkerTuning,
    Pick<
      ActivityDeps,
      'hooks' | 'floors' | 'approverKeys' | 'approvalPolicy' | 'webhooks' | 'gatewayUrl' | 'prices'
    > {
  /** The model's OpenAI-compatible endpoint, key and default model name. */
  model?: ModelSettings;
  /**
   * The tools offered: built-ins by name (`read`) or group (`group:fs`), and your own made with
   * `defineTool`. Default: every built-in tool.
   */
  tools?: readonly ToolChoice[];
  /** What the built-in tools run with (command policy and limits, web fetch, memory, sessions). */
  builtinTools?: BuiltinToolDeps;
  /** Where more tools come from while the worker runs (MCP servers, RAP toolsets); closed when it stops. */
  toolSources?: readonly ToolSource[];
  /** The workspace of conversations that name none. Default: the process's working directory. */
  workspace?: string;
  /** Any dependency of the model and tool activities, in full. */
  activities?: Partial<ActivityDeps>;
}

/**
 * The activities' dependencies the options describe, with the model's wires made (once, for the
 * worker's life), and whether the plugin made the tool registry (then it closes its tool sources
 * when the worker stops) or was handed one.
 */
export async function activityDepsFrom(
  options: AgentPluginOptions,
): Promise<{ deps: ResolvedActivityDeps; ownsTools: boolean }> {
  const given = options.activities ?? {};
  const model = await modelDeps(options.model, given);
  const tools =
    given.tools ??
    new ToolRegistry(selectTools(options.tools, builtinTools(options.builtinTools)), [
      ...(options.toolSources ?? []),
    ]);
  const deps: ResolvedActivityDeps = {
    ...model,
    tools,
    defaultWorkspace: options.workspace ?? process.cwd(),
    ...(options.hooks ? { hooks: options.hooks } : {}),
    ...(options.floors ? { floors: options.floors } : {}),
    ...(options.approverKeys ? { approverKeys: options.approverKeys } : {}),
    ...(options.approvalPolicy ? { approvalPolicy: options.approvalPolicy } : {}),
    ...(options.webhooks ? { webhooks: options.webhooks } : {}),
    ...(options.gatewayUrl ? { gatewayUrl: options.gatewayUrl } : {}),
    ...(options.prices ? { prices: options.prices } : {}),
    ...given,
    // Wires given in full win over those made from the settings or from an OpenAI client.
    wires: { ...model.wires, ...given.wires },
  };
  return { deps, ownsTools: given.tools === undefined };
}

/** The model's part: from `activities` when it names a model and a way to call it, else from the settings. */
async function modelDeps(
  model: ModelSettings | undefined,
  given: Partial<ActivityDeps>,
): Promise<Pick<ResolvedActivityDeps, 'defaultModel' | 'provider' | 'api' | 'wires'>> {
  if (given.defaultModel && (given.openai || given.wires)) {
    return { defaultModel: given.defaultModel, wires: given.openai ? await wiresOver(given.openai) : {} };
  }
  if (!model) {
    throw new Error(
      'durable-agent needs a model: pass `model: { baseURL, apiKey, model }` (any OpenAI-compatible endpoint)',
    );
  }
  return workerModelOf(model);
}
