import { randomUUID } from 'node:crypto';
import { statSync } from 'node:fs';
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
import { printable } from '../../shared/printable-text';

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
  // Without --workspace the rerun works where the original did (see rerunWorkspace).
  const workspace = values.workspace !== undefined ? path.resolve(cwd, values.workspace) : undefined;
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
 * Where a rerun works: the --workspace given; else the original's workspace, as its options name
 * it, when that directory is here (an exported history may come from another machine); else the
 * current directory, as `run` does.
 */
export function rerunWorkspace(
  given: string | undefined,
  originalOptions: unknown,
  cwd = process.cwd(),
): string {
  if (given !== undefined) return given;
  const original = (originalOptions as { workspace?: unknown } | undefined)?.workspace;
  if (typeof original === 'string' && path.isAbsolute(original) && isDirectory(original)) return original;
  if (typeof original === 'string') {
    log(`the original's workspace ${original} is not a directory here: the rerun works in ${cwd}`);
  }
  return cwd;
}

function isDirectory(dir: string): boolean {
  try {
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

/**
 * `rerun`: the original's user messages again, from run N, in a new conversation with another model
 * or prompt; tool calls answered from the original's results. Prints the runs side by side.
 */
export async function rerunCommand(args: string[], cleanups: Cleanups): Promise<number> {
  const rerun = parseRerunArgs(args);
  const systemPrompt =
    rerun.systemPromptFile !== undefined ? await readFile(rerun.systemPromptFile, 'utf8') : undefined;
  const connection = await connectRerunAgent(cleanups, {
    startWorker: rerun.startWorker,
    ...(rerun.baseUrl !== undefined ? { baseUrl: rerun.baseUrl } : {}),
  });
  if (!connection) return 2;
  const { conversationId, executions } = await readHistorySource(connection.client, rerun.source);
  const plan = rerunPlan(
    conversationId,
    executions,
    rerun.fromRun,
    connection.client.options.loadedDataConverter.payloadConverter,
  );
  // Rerun's own worker works where the rerun does; a shared worker is given the --workspace, if any.
  const workspace = rerunWorkspace(rerun.variant.workspace, plan.options);
  const { agent, client } = await connection.serve(workspace);
  const variant = { ...rerun.variant, ...(rerun.startWorker ? { workspace } : {}) };
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
    { ...variant, ...(systemPrompt !== undefined ? { systemPrompt } : {}) },
  );
  process.stdout.write(
    rerun.json
      ? report.turns.map((turn) => `${JSON.stringify(turn)}\n`).join('')
      : printable(formatRerunReport(report)),
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
