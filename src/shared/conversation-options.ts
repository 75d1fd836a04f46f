import { z } from 'zod';
import { AgentIdSchema } from './agent-id';
import { ApprovalSettingsSchema } from './approvals';
import { BudgetSchema } from './budget';
import { CompactionSettingsSchema } from './compaction';
import { DEFAULT_MAX_TOOL_ITERATIONS } from './constants';
import { ModelApiSchema } from './model-api';
import { ExecSecurityModeSchema } from './exec-security';
import { RerunSchema } from './rerun';
import { SubAgentLimitsSchema } from './sub-agents';
import { ToolProfileSchema } from './tool-catalog';

/**
 * Chosen when a conversation starts; fixed for its life. Strict, like every schema a client fills
 * in: a misspelled key is refused by name rather than dropped, so a limit is never silently lost.
 */
export const ConversationOptionsSchema = z.strictObject({
  /** Model name sent to the endpoint; the worker's AGENT_MODEL when absent. */
  model: z.string().min(1).optional(),
  /** The API the model is called through (`chat`, `responses`, `anthropic`); the worker's AGENT_MODEL_API when absent. */
  modelApi: ModelApiSchema.optional(),
  /**
   * The system prompt sent before the transcript. When absent, the worker writes a default one at
   * each run's start: the workspace, the date, the platform, the tools' conventions, when to stop,
   * and the AGENTS.md files from the worker's workspace root down to the workspace.
   */
  systemPrompt: z.string().optional(),
  /** Added after the system prompt (the given one or the default), after a blank line. */
  appendSystemPrompt: z.string().optional(),
  /** Model calls that ask for tools before a run is stopped with an error event. */
  maxToolIterations: z.number().int().min(1).default(DEFAULT_MAX_TOOL_ITERATIONS),
  /** Absolute path on the worker's machine that file and command tools are confined to; the worker's default when absent. */
  workspace: z.string().optional(),
  /** Whose durable memory the memory tools read and write; conversations of one agent share it. `default` when absent. */
  agentId: AgentIdSchema.optional(),
  /**
   * `exec` security mode (`full`, `sandbox` or `safe-bin`) for this conversation. Only a stricter mode than the
   * worker's (AGENT_EXEC_SECURITY) takes effect: the worker's is the ceiling. The worker's when absent.
   */
  execSecurity: ExecSecurityModeSchema.optional(),
  /**
   * Which tools the model is offered (the policy pipeline: each step only narrows): the profile's
   * tools, narrowed by the worker's policy, then by `allow` and `deny`. `full` when absent.
   */
  profile: ToolProfileSchema.optional(),
  /** Only these of what the profile and the worker leave (tool names, `group:` names, `*` patterns); an empty list allows nothing. */
  allow: z.array(z.string()).optional(),
  /** Added to the profile's tools, e.g. an embedder's own tools next to the `coding` ones. */
  alsoAllow: z.array(z.string()).optional(),
  /** Never these tools, whatever else allows them. */
  deny: z.array(z.string()).optional(),
  /** The older form of `allow`, still honoured (as a step of its own); prefer `allow`. */
  tools: z.array(z.string()).optional(),
  /**
   * Senders whose messages may use `ownerOnly` tools (a message's `sender`); everyone when absent. A
   * run that took a message from anyone else, or from no named sender, is not an owner's run.
   */
  owners: z.array(z.string().trim().min(1)).min(1).optional(),
  /** Summarise the oldest turns when the transcript grows past a budget; `false` never compacts. */
  compaction: z
    .union([z.literal(false), CompactionSettingsSchema])
    .default({ maxTokens: 100_000, keepTokens: 20_000 }),
  /** Which tool calls wait for a person's decision, who may decide, and for how long. */
  approval: ApprovalSettingsSchema.default({}),
  /**
   * Continue as new (a fresh history, the conversation carried over) at the next idle point once a
   * run's history has this many events; also whenever Temporal suggests it. Only Temporal's suggestion when absent.
   */
  maxHistoryEvents: z.number().int().min(50).optional(),
  /** A sub-agent's conversation: it ends once its first run is over, its answer the workflow's result. */
  endAfterFirstRun: z.boolean().optional(),
  /** How deep and how widely the model may delegate to sub-agents, and how long each may take. */
  subAgents: SubAgentLimitsSchema.prefault({}),
  /** The conversations above a sub-agent's, outermost first (RAP's `thread_ancestors`). */
  ancestors: z.array(z.string()).optional(),
  /** The conversation ends after this long without a message; never when absent. */
  idleTimeoutMs: z.number().int().positive().optional(),
  /**
   * How long one model call, its retries included, may take before the run ends with an error:
   * transient failures (429, 5xx, timeouts, lost connections, a dead worker) are tried again, with
   * backoff up to a minute apart, until then. DEFAULT_MODEL_RETRY_MS (30 minutes) when absent.
   */
  modelRetryMs: z.number().int().min(10_000).optional(),
  /**
   * What the conversation's runs may spend (tokens, tool calls, time from its start) before one
   * pauses with a pending decision: raise the budget, or stop the run. Unlimited when absent.
   */
  budget: BudgetSchema.optional(),
  /** This conversation reruns another's messages: its tool calls are answered from that one's results where they match. */
  rerun: RerunSchema.optional(),
});
export type ConversationOptions = z.infer<typeof ConversationOptionsSchema>;
/**
 * A conversation's options as a caller gives them (defaults not yet applied): model, system
 * prompt, tools, approvals, budget and the like.
 *
 * @useDeclaredType
 */
export type ConversationOptionsInput = z.input<typeof ConversationOptionsSchema>;
