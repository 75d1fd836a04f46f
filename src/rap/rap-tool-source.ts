import { setTimeout as delay } from 'node:timers/promises';
import { CompleteAsyncError, Context } from '@temporalio/activity';
import { z } from 'zod';
import type { RiskLevel } from '../shared/approvals';
import { CANCEL_SUBSCRIPTION_TOOL_NAME } from '../shared/rap';
import { type RapToolDefinition, type RapToolset, RapToolsetSchema } from './rap-toolset';
import type { AgentTool, ToolContext, WorkflowTool } from '../tools/tool';
import { ToolError } from '../tools/tool-error';
import type { ToolDiscovery, ToolSource } from '../tools/tool-source';
import { callbackPath } from './callback-token';
import type { RapSettings } from './rap-settings';

const ANY_OBJECT = z.record(z.string(), z.unknown());
/** Dispatch tries when the tool server is unreachable or answers 5xx, with doubling waits from this. */
const DISPATCH_ATTEMPTS = 5;
const FIRST_RETRY_MS = 250;

/**
 * The tools of the configured RAP toolsets (rap spec, "Toolsets"), each an activity that POSTs the
 * invocation and completes when the tool calls back. A toolset that fails validation exposes none
 * of its tools; a name two toolsets define exposes neither.
 */
export class RapToolSource implements ToolSource {
  /** Always `rap`. */
  readonly name = 'rap';

  constructor(
    private readonly settings: RapSettings,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {}

  /** Fetches and validates every toolset's manifest; a toolset that fails is a warning. */
  async discover(): Promise<ToolDiscovery> {
    const warnings: string[] = [];
    const loaded = await Promise.all(
      this.settings.toolsets.map(async (base) => {
        try {
          return await this.load(base);
        } catch (error) {
          warnings.push(`RAP toolset at ${base} offers no tools: ${(error as Error).message}`);
          return undefined;
        }
      }),
    );
    const owners = new Map<string, string[]>();
    for (const toolset of loaded) {
      for (const tool of toolset?.tools ?? [])
        owners.set(tool.name, [...(owners.get(tool.name) ?? []), toolset!.name]);
    }
    const tools: AgentTool[] = [];
    for (const toolset of loaded) {
      if (!toolset) continue;
      for (const tool of toolset.tools) {
        const defined = owners.get(tool.name)!;
        if (defined.length > 1) continue;
        tools.push(this.agentToolOf(toolset, tool));
      }
    }
    for (const [name, toolsets] of owners) {
      if (toolsets.length > 1)
        warnings.push(`RAP tool ${name} is defined by ${toolsets.join(' and ')}, so by neither`);
    }
    return { tools: [...tools, cancelSubscriptionTool], warnings };
  }

  private async load(base: string): Promise<RapToolset> {
    const response = await this.fetchImpl(`${base}/.well-known/rap-toolset`, {
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(10_000),
    });
    if (response.status !== 200) throw new Error(`GET /.well-known/rap-toolset answered ${response.status}`);
    const parsed = RapToolsetSchema.safeParse(await response.json());
    if (!parsed.success) throw new Error(`invalid toolset: ${z.prettifyError(parsed.error)}`);
    return parsed.data;
  }

  private agentToolOf(toolset: RapToolset, definition: RapToolDefinition): AgentTool {
    const annotations = definition.annotations ?? {};
    const risk: RiskLevel = annotations.readOnly ? 'low' : annotations.destructive ? 'high' : 'medium';
    return {
      name: definition.name,
      label: definition.name,
      description: definition.description,
      parameters: argumentsCheckedAgainst(definition.inputSchema),
      inputJsonSchema: definition.inputSchema,
      category: 'other',
      // Dispatch retries itself; a call the tool accepted is never sent again.
      idempotent: false,
      risk,
      asyncCompletion: true,
      startToCloseTimeoutMs: this.settings.timeoutMs,
      verbatimParameters: Object.keys((definition.inputSchema.properties as Record<string, unknown>) ?? {}),
      execute: async (toolCallId, params, signal, _onUpdate, context) => {
        await this.invoke(
          toolset,
          definition,
          toolCallId,
          params as Record<string, unknown>,
          signal,
          context,
        );
        throw new CompleteAsyncError();
      },
    };
  }

  /** POSTs the invocation until the tool acknowledges it (200); throws a ToolError when it never does. */
  private async invoke(
    toolset: RapToolset,
    definition: RapToolDefinition,
    toolCallId: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
    context: ToolContext,
  ): Promise<void> {
    const base = this.settings.publicUrl ?? `http://${this.settings.host}:${this.settings.port}`;
    const callbackUrl =
      base +
      callbackPath(
        {
          conversationId: context.conversationId,
          toolCallId,
          taskToken: Context.current().info.taskToken,
          toolName: definition.name,
        },
        this.settings.secret,
      );
    const body = JSON.stringify({
      operation: definition.name,
      arguments: args,
      id: toolCallId,
      call_id: null,
      callback_url: callbackUrl,
      group_id: context.conversationId,
      ...(context.ancestors?.length ? { thread_ancestors: context.ancestors } : {}),
      ...(context.userId !== undefined ? { user_id: context.userId } : {}),
    });
    let problem = '';
    for (let attempt = 1; attempt <= DISPATCH_ATTEMPTS; attempt++) {
      if (attempt > 1) await delay(FIRST_RETRY_MS * 2 ** (attempt - 2), undefined, { signal });
      let status: number;
      try {
        const response = await this.fetchImpl(toolset.endpoint, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
          signal: AbortSignal.any([signal, AbortSignal.timeout(30_000)]),
        });
        status = response.status;
        await response.body?.cancel();
      } catch (error) {
        if (signal.aborted) throw error;
        problem = `unreachable (${(error as Error).message})`;
        continue;
      }
      if (status === 200) return;
      if (status >= 500) {
        problem = `answered ${status}`;
        continue;
      }
      throw new ToolError(
        'ExecutionFailed',
        `the tool server did not accept the call: it answered ${status}`,
      );
    }
    throw new ToolError(
      'ExecutionFailed',
      `the tool server at ${toolset.endpoint} ${problem} after ${DISPATCH_ATTEMPTS} tries`,
    );
  }
}

/** Offered whenever RAP toolsets are configured; the conversation answers it itself, never this activity. */
const cancelSubscriptionTool: WorkflowTool = {
  name: CANCEL_SUBSCRIPTION_TOOL_NAME,
  label: 'Cancel subscription',
  description:
    'Cancels a subscription this conversation started: no more events from it. tool_call_id is the id of the call that started it.',
  parameters: z.object({
    tool_call_id: z.string().describe('the id of the tool call that started the subscription'),
  }),
  category: 'other',
  idempotent: false,
  risk: 'low',
};

/**
 * Objects, checked against the tool's inputSchema before dispatch (the spec's SHOULD) but passed on
 * as the model sent them: the JSON schema's defaults are not filled in. A schema zod cannot read
 * (external `$ref`s) is left to the tool to check.
 */
function argumentsCheckedAgainst(inputSchema: Record<string, unknown>): z.ZodType {
  let check: z.ZodType;
  try {
    check = z.fromJSONSchema(inputSchema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch {
    return ANY_OBJECT;
  }
  return ANY_OBJECT.superRefine((args, context) => {
    const checked = check.safeParse(args);
    if (!checked.success) for (const issue of checked.error.issues) context.addIssue({ ...issue });
  });
}
