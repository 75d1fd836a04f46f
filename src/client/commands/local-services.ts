import type { ConnectionSettings } from '../../shared/connection-settings';
import { type Cleanups, log } from './cleanups';

// src/worker is loaded on demand: commands that only talk to Temporal never pay for it.

/** TEMPORAL_ADDRESS, a server already on the embedded port, or the embedded server started now. */
export async function ensureServer(settings: ConnectionSettings, cleanups: Cleanups): Promise<string> {
  const { ensureTemporalServer } = await import('../../worker/ensure-server');
  const server = await ensureTemporalServer(settings, process.env, log);
  const embedded = server.embedded;
  if (embedded) {
    cleanups.last(async () => {
      // Another `run` or worker may have found this server and still need it.
      const { otherWorkersPoll } = await import('../../worker/other-workers');
      const shared = await otherWorkersPoll(server.address, settings.namespace, settings.taskQueue).catch(
        () => false,
      );
      if (!shared) return embedded.stop();
      log(
        `Other workers still use the Temporal server on ${server.address}; leaving it running (pid ${embedded.pid}).`,
      );
      embedded.detach();
    });
  }
  return server.address;
}

/** TEMPORAL_ADDRESS, or a server already on the embedded port; never starts one. */
export async function findRunningServer(settings: ConnectionSettings): Promise<string> {
  if (settings.address) return settings.address;
  const [{ embeddedServerSettings }, { isListening }] = await Promise.all([
    import('../../worker/ensure-server'),
    import('../../worker/free-port'),
  ]);
  const { port } = embeddedServerSettings(process.env);
  if (await isListening('127.0.0.1', port)) return `127.0.0.1:${port}`;
  throw new Error(
    `no Temporal server on 127.0.0.1:${port}, so no conversation is running there: start one with \`durable-agent server\` (or \`run\`, \`worker\`), or set TEMPORAL_ADDRESS`,
  );
}

/** A worker in this process with the built-in tools and the model from the environment. */
export async function startLocalWorker(
  settings: ConnectionSettings,
  address: string,
  workspace: string,
  cleanups: Cleanups,
): Promise<{ done: Promise<void> }> {
  const [
    { connectWorker },
    { createAgentWorker },
    { createOpenAiClient, modelSettingsFromEnv },
    { ToolRegistry },
    { builtinTools },
    { toolPolicyFromEnv },
    { execPolicyFromEnv, execEnvPassFromEnv },
    { childEnvironment },
    { externalToolsFromEnv },
    { webFetchOptionsFromEnv },
    { sandboxAvailability },
    { floorsFromEnv, approverKeysFromEnv },
    { webhooksFromEnv },
  ] = await Promise.all([
    import('../../worker/connect'),
    import('../../worker/create-worker'),
    import('../../worker/model-settings'),
    import('../../tools/registry'),
    import('../../tools/builtin-tools'),
    import('../../worker/worker-tool-policy'),
    import('../../worker/exec-settings'),
    import('../../tools/child-environment'),
    import('../../worker/external-tools'),
    import('../../worker/web-fetch-settings'),
    import('../../tools/bubblewrap'),
    import('../../worker/floor-settings'),
    import('../../worker/webhook-settings'),
  ]);
  const model = modelSettingsFromEnv(process.env);
  if (!model) throw new Error('no model is configured');
  const external = await externalToolsFromEnv(process.env, settings, address, log);
  const execPolicy = execPolicyFromEnv(process.env);
  if (execPolicy.security === 'sandbox') {
    const available = sandboxAvailability();
    if (!available.ok) throw new Error(`AGENT_EXEC_SECURITY=sandbox needs bubblewrap: ${available.reason}`);
  }
  const approverKeys = approverKeysFromEnv(process.env);
  const runtime = {
    ...execPolicy,
    childEnv: childEnvironment(process.env, execEnvPassFromEnv(process.env)),
  };
  const tools = new ToolRegistry(
    builtinTools({ runtime, webFetch: webFetchOptionsFromEnv(process.env) }),
    external.sources,
  );
  const connection = await connectWorker(settings, address);
  const worker = await createAgentWorker({
    connection,
    namespace: settings.namespace,
    taskQueue: settings.taskQueue,
    activities: {
      openai: createOpenAiClient(model),
      defaultModel: model.model,
      ...(model.provider ? { provider: model.provider } : {}),
      tools,
      defaultWorkspace: workspace,
      rapToolsets: external.rapToolsets,
      floors: floorsFromEnv(process.env, { workspace, execSecurity: execPolicy.security ?? 'full' }),
      ...(approverKeys ? { approverKeys } : {}),
      webhooks: webhooksFromEnv(process.env),
      ...(process.env.DURABLE_AGENT_GATEWAY_URL ? { gatewayUrl: process.env.DURABLE_AGENT_GATEWAY_URL } : {}),
    },
    toolPolicy: toolPolicyFromEnv(process.env),
  });
  await external.start();
  const done = worker.run();
  cleanups.first(async () => {
    const inFlight = worker.getStatus().numInFlightActivities;
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
  });
  return { done };
}
