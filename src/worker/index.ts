/**
 * The worker API (`durable-agent/worker`): add durable-agent to a Temporal worker of your own with
 * `DurableAgentPlugin`, or build one that runs only durable-agent; tools of your own with
 * `defineTool`. Clients import `durable-agent`; workflow code `durable-agent/workflow`.
 *
 * @module durable-agent/worker
 */
export { DurableAgentPlugin, STICKY_QUEUE_TIMEOUT_MS } from './agent-plugin';
export type { AgentPluginOptions, AgentWorkerTuning } from './agent-plugin-options';
export type { ToolChoice } from './tool-selection';
export { type AgentWorkerOptions, createAgentWorker } from './create-worker';
export type { AgentWorker } from './agent-worker';
export type { ActivityDeps } from '../activities/create-activities';
export type {
  ModelStream,
  ModelWire,
  ModelWires,
  PartialAnswer,
  StatusFailure,
  TransientFailure,
  UnreachableFailure,
  WireFailure,
  WireRequest,
  WireServer,
} from '../activities/models/model-wire';
export type { ModelApi } from '../shared/model-api';
export type { AssistantMessage, Message } from '../shared/messages';
export type { ModelPrice, ModelPrices } from '../shared/model-prices';
export { type RunningWorker, type WorkerFromEnvOptions, startWorkerFromEnv } from './local-worker';
export { connectClient, connectWorker } from './connect';
export { connectionSettingsFromEnv } from '../client/connection-settings-from-env';
export type { ConnectionSettings, ConnectionTls, PemSource } from '../shared/connection-settings';
export { agentDataConverter } from './data-converter';
export type { LiveEndpointSettings, LiveEndpointTls } from './live-endpoint-settings';
export { type ModelSettings, modelSettingsFromEnv } from '../activities/models/model-settings';
export type { AnthropicSettings } from '../activities/models/anthropic/anthropic-settings';
export {
  type AgentTool,
  type RegisteredTool,
  type ToolContext,
  type ToolResult,
  type ToolUpdate,
  type WorkflowTool,
  defineTool,
  imageResult,
  jsonResult,
  textResult,
} from '../tools/tool';
export { ToolError } from '../tools/tool-error';
export { ToolRegistry } from '../tools/registry';
export { type BuiltinToolDeps, builtinTools } from '../tools/builtin/builtin-tools';
export type { ToolSource } from '../tools/tool-source';
export type * from '../tools/tool-hooks';
export { type ToolResultFinisher, createToolResultFinisher } from '../tools/finish-tool-result';
export { McpToolSource } from '../mcp/mcp-tool-source';
export { RapToolSource } from '../rap/rap-tool-source';
export { RemoteA2AToolSource, type RemoteA2AToolSourceOptions } from '../a2a-remote/remote-a2a-tool-source';
export { type RemoteAgent, remoteAgentsFromEnv } from '../a2a-remote/remote-agents-config';
export type { RemoteCard } from '../a2a-remote/remote-card';
export { startRapCallbackServer } from '../rap/callback-server';
export type { ToolPolicy } from '../shared/tool-policy';
export type { WorkerFloors } from '../shared/worker-floors';
export type { WebhookConfig } from '../shared/webhooks';
export type { A2APushDeps } from '../activities/deliver-a2a-push';
