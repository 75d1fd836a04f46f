import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { type RerunReport, type RerunVariant, rerunConversation } from '../../client/rerun';
import { rerunPlan } from '../../history/rerun-plan';
import { oneLine } from '../../shared/one-line';
import { RerunToolsSchema } from '../../shared/rerun';
import { type Cleanups, log } from '../cleanups';
import { type HistorySource, historySourceArg, readHistorySource } from '../history-source';
import { connectRerunAgent } from '../rerun-worker';
import {
  conversationIdArg,
  namedPositionals,
  parseCommandArgs,
  positiveInteger,
} from '../parse-command-args';
import { UsageError } from '../usage-error';

export interface RerunArgs {
  source: HistorySource;
  fromRun: number;
  variant: Omit<RerunVariant, 'systemPrompt'>;
  /** A file holding the system prompt to use instead of the original's. */
  systemPromptFile?: string;
  /** The endpoint of rerun's own worker; never handed to a shared worker. */
  baseUrl?: string;
  newId: string;
  startWorker: boolean;
  json: boolean;
}

export function parseRerunArgs(args: string[], cwd = process.cwd()): RerunArgs {
  const { values, positionals } = parseCommandArgs('rerun', {
    args,
    allowPositionals: true,
    options: {
      at: { type: 'string' },
      model: { type: 'string' },
      'base-url': { type: 'string' },
      'system-prompt': { type: 'string' },
      tools: { type: 'string', default: 'recorded' },
      id: { type: 'string' },
      workspace: { type: 'string' },
      json: { type: 'boolean', default: false },
      'no-worker': { type: 'boolean', default: false },
    },
  });
  const { 'ID|FILE': target } = namedPositionals('rerun', positionals, ['ID|FILE'] as const);
  const tools = RerunToolsSchema.safeParse(values.tools);
  if (!tools.success) throw new UsageError(`--tools takes recorded, live or ask, not ${values.tools}`);
  const startWorker = !values['no-worker'];
  if (values['base-url'] !== undefined && !startWorker) {
    throw new UsageError(
      "--base-url needs rerun's own worker: a shared worker calls only the endpoint its operator configured",
    );
  }
  // Rerun's own worker serves the workspace given, else the current directory, like `run`.
  const workspace =
    values.workspace !== undefined || startWorker ? path.resolve(cwd, values.workspace ?? '.') : undefined;
  return {
    source: historySourceArg(target),
    fromRun: positiveInteger(values.at, '--at') ?? 1,
    variant: {
      tools: tools.data,
      ...(values.model !== undefined ? { model: values.model } : {}),
      ...(workspace !== undefined ? { workspace } : {}),
    },
    ...(values['system-prompt'] !== undefined ? { systemPromptFile: values['system-prompt'] } : {}),
    ...(values['base-url'] !== undefined ? { baseUrl: values['base-url'] } : {}),
    newId: conversationIdArg(values.id ?? `conv-${randomUUID()}`),
    startWorker,
    json: values.json,
  };
}

/**
 * `rerun`: the original's user messages again, from run N, in a new conversation with another model
 * or prompt; tool calls answered from the original's results. Prints the runs side by side.
 */
export async function rerunCommand(args: string[], cleanups: Cleanups): Promise<number> {
  const rerun = parseRerunArgs(args);
  const systemPrompt =
    rerun.systemPromptFile !== undefined ? await readFile(rerun.systemPromptFile, 'utf8') : undefined;
  const connected = await connectRerunAgent(cleanups, {
    startWorker: rerun.startWorker,
    ...(rerun.baseUrl !== undefined ? { baseUrl: rerun.baseUrl } : {}),
    ...(rerun.variant.workspace !== undefined ? { workspace: rerun.variant.workspace } : {}),
  });
  if (!connected) return 2;
  const { agent, client } = connected;
  const { conversationId, executions } = await readHistorySource(client, rerun.source);
  const plan = rerunPlan(
    conversationId,
    executions,
    rerun.fromRun,
    client.options.loadedDataConverter.payloadConverter,
  );
  if (!rerun.json) log(`rerun of ${conversationId} from run ${rerun.fromRun}: conversation ${rerun.newId}`);
  const report = await rerunConversation(
    {
      agent,
      client,
      onEvent: (event) => {
        if (event.type === 'approval_requested' && !rerun.json) {
          log(
            `waiting for a decision on ${event.toolName} (${event.toolCallId}): durable-agent approve ${rerun.newId} ${event.toolCallId} [--reject]`,
          );
        }
      },
    },
    plan,
    executions,
    rerun.newId,
    { ...rerun.variant, ...(systemPrompt !== undefined ? { systemPrompt } : {}) },
  );
  process.stdout.write(
    rerun.json ? report.turns.map((turn) => `${JSON.stringify(turn)}\n`).join('') : formatRerunReport(report),
  );
  return report.turns.some((turn) => turn.rerun.ended !== undefined) ? 1 : 0;
}

/** The runs side by side: the messages, then the original's and the rerun's answer, tool calls and tokens. */
export function formatRerunReport(report: RerunReport): string {
  const lines: string[] = [`Rerun ${report.conversationId} of ${report.original}`];
  for (const turn of report.turns) {
    const calls = (toolCalls: Array<{ name: string; arguments: string }>) =>
      toolCalls.length
        ? toolCalls.map((call) => `${call.name} ${oneLine(call.arguments, 60)}`).join(', ')
        : 'none';
    const side = (label: string, record: RerunReport['turns'][number]['original'] & { ended?: string }) => [
      `  ${label} answer: ${record.answer !== undefined ? oneLine(record.answer, 160) : (record.ended ?? 'none')}`,
      `  ${label} tools:  ${calls(record.toolCalls)}`,
      `  ${label} tokens: ${record.tokens.input} in / ${record.tokens.output} out`,
    ];
    const changes = [
      turn.answerChanged ? 'answer changed' : 'same answer',
      turn.toolsChanged ? 'tools changed' : 'same tools',
    ];
    lines.push(
      '',
      `Run ${turn.run}: ${turn.messages.map((text) => oneLine(text, 120)).join(' / ')}  (${changes.join(', ')})`,
      ...side('original', turn.original),
      ...side('rerun   ', turn.rerun),
    );
  }
  return `${lines.join('\n')}\n`;
}
