import type OpenAI from 'openai';
import type { ApprovalPolicy } from '../shared/approval-policy';
import { createSendRapNotice } from '../rap/rap-notices';
import { processLiveModelText } from '../client/live-model-text';
import type { ApproverKeys } from '../shared/signed-decisions';
import type { WorkerFloors } from '../shared/worker-floors';
import type { WebhookConfig } from '../shared/webhooks';
import { createAdmitConversation } from './admit-conversation';
import { type A2APushDeps, createDeliverA2APush } from './deliver-a2a-push';
import { createDeliverWebhook, webhookTargets } from './deliver-webhook';
import type { ToolListing } from '../shared/tool-descriptor';
import type { LocalToolOutcome, ToolRunInput } from '../shared/tool-run';
import { type ModelDeps, createCallModel } from './call-model';
import type { ModelWires } from './models/model-wire';
import { createComposeSystemPrompt } from './compose-system-prompt';
import { type ToolDeps, createRunTool } from './run-tool';
import { createSummarizeTranscript } from './summarize-transcript';
import { TranscriptCache } from './transcript-cache';
import type { DailyTokenBudgets } from '../shared/daily-budget';
import { DailyTokenLedger } from './daily-token-ledger';
import { type TranscriptLoader, loadTranscriptFromWorkflow } from './transcript-loader';

/**
 * What the agent's activities need, as `createAgentWorker({ activities })` takes it: the model's
 * wires (or an OpenAI client), the tools, and the operator's settings. What is optional has a default.
 */
export interface ActivityDeps
  extends Omit<ModelDeps, 'transcriptCache' | 'loadTranscript' | 'wires'>, ToolDeps {
  /**
   * Chat Completions and the Responses API through this client, unless `wires` has its own for
   * them. Make it with `maxRetries: 0`: Temporal's retry policy is the only one.
   */
  openai?: OpenAI;
  /** The wires models are called through, by API (Anthropic's Messages API needs one of its own). */
  wires?: ModelWires;
  /** Transcripts kept in memory between model calls; a new cache of the default size when absent. */
  transcriptCache?: TranscriptCache;
  /** How a model call reads a transcript it does not have (from the workflow); the default query when absent. */
  loadTranscript?: TranscriptLoader;
  /** RAP tool servers' base URLs, for close_thread and cancel_tool_call notices. */
  rapToolsets?: readonly string[];
  /** What the operator holds every conversation to; see `createAdmitConversation` for the defaults. */
  floors?: Partial<WorkerFloors>;
  /** Approver name -> raw Ed25519 public key (base64url): when present, decisions must be signed. */
  approverKeys?: ApproverKeys;
  /** The operator's approval policy (quorums, escalation, expiry); its approvers all have keys. */
  approvalPolicy?: ApprovalPolicy;
  /** Where conversations' events are posted; the URLs and secrets never enter workflow history. */
  webhooks?: readonly WebhookConfig[];
  /** The gateway's public base URL, for links in webhook bodies. */
  gatewayUrl?: string;
  /** How A2A push notifications are posted: whether they may reach private addresses (not by default). */
  a2aPush?: A2APushDeps;
  /** The conversation search attributes are registered on the server: conversations keep them up to date. */
  searchAttributes?: boolean;
  /** The operator's daily token budgets per agent id, kept across the fleet; none when absent. */
  dailyTokenBudgets?: DailyTokenBudgets;
  /** The clock daily budgets count UTC days by (epoch ms); the machine's when absent. */
  dailyTokenClock?: () => number;
  /**
   * Short read-only tools may run as local activities, on the worker running the conversation
   * (the default). Off on a worker of a fleet that runs workflows and activities apart, since a
   * workflows-only worker may not see the files the tools read.
   */
  localTools?: boolean;
}

/** The activities' dependencies as the worker resolved them when it started: `openai` made into wires. */
export type ResolvedActivityDeps = ActivityDeps & { wires: ModelWires };

/** The worker's activities, closed over their dependencies: tests pass fakes, the worker real clients. */
export function createActivities(deps: ResolvedActivityDeps) {
  // One cache for both model activities: a summary and the next model call read the same transcript.
  const modelDeps: ModelDeps = {
    ...deps,
    transcriptCache: deps.transcriptCache ?? new TranscriptCache(),
    loadTranscript: deps.loadTranscript ?? loadTranscriptFromWorkflow,
    liveText: deps.liveText ?? processLiveModelText,
    ...(deps.dailyTokenBudgets
      ? { dailyLedger: new DailyTokenLedger(deps.dailyTokenBudgets, deps.dailyTokenClock) }
      : {}),
  };
  const runTool = createRunTool(deps);
  return {
    callModel: createCallModel(modelDeps),
    summarizeTranscript: createSummarizeTranscript(modelDeps),
    runTool,
    runLocalTool: async (input: ToolRunInput): Promise<LocalToolOutcome> => ({
      ...(await runTool(input)),
      toolCallId: input.toolCallId,
    }),
    sendRapNotice: createSendRapNotice(deps.rapToolsets ?? []),
    composeSystemPrompt: createComposeSystemPrompt({
      defaultWorkspace: deps.defaultWorkspace,
      ...(deps.floors?.workspaceRoots ? { workspaceRoots: deps.floors.workspaceRoots } : {}),
    }),
    admitConversation: createAdmitConversation({
      defaultWorkspace: deps.defaultWorkspace,
      ...(deps.floors ? { floors: deps.floors } : {}),
      ...(deps.approverKeys ? { approverKeys: deps.approverKeys } : {}),
      ...(deps.approvalPolicy ? { approvalPolicy: deps.approvalPolicy } : {}),
      webhooks: webhookTargets(deps.webhooks ?? []),
      ...(deps.searchAttributes ? { searchAttributes: true } : {}),
      ...(deps.dailyTokenBudgets ? { dailyTokenBudgets: deps.dailyTokenBudgets } : {}),
      ...(deps.prices ? { prices: deps.prices } : {}),
      defaultModel: deps.defaultModel,
    }),
    deliverWebhook: createDeliverWebhook({
      webhooks: deps.webhooks ?? [],
      ...(deps.gatewayUrl ? { gatewayUrl: deps.gatewayUrl } : {}),
    }),
    deliverA2APush: createDeliverA2APush(deps.a2aPush),
    listTools: async (): Promise<ToolListing> => {
      const warnings = await deps.tools.refresh();
      const tools = deps.tools.descriptors();
      return {
        tools:
          deps.localTools === false ? tools.map(({ local: _local, ...descriptor }) => descriptor) : tools,
        warnings,
      };
    },
  };
}

export type AgentActivities = ReturnType<typeof createActivities>;
