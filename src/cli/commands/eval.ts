import { randomUUID } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type EvalCaseResult, evalCaseResult, evalMarkdown, evalReport } from '../../client/eval-report';
import { rerunConversation } from '../../client/rerun';
import { rerunPlan } from '../../history/rerun-plan';
import { type EvalCase, type EvalFile, EvalFileSchema } from '../../shared/eval-file';
import { schemaProblems } from '../../shared/schema-problems';
import { type Cleanups, log } from '../cleanups';
import type { ConnectedAgent } from '../connect-agent';
import { historySourceArg, readHistorySource } from '../history-source';
import { namedPositionals, parseCommandArgs } from '../parse-command-args';
import { connectRerunAgent } from '../rerun-worker';
import { UsageError } from '../usage-error';
import { printable } from '../../shared/printable-text';

export interface EvalArgs {
  file: string;
  /** Where report.json and report.md go. */
  out: string;
  workspace?: string;
  startWorker: boolean;
  json: boolean;
}

export function parseEvalArgs(args: string[], cwd = process.cwd(), now = new Date()): EvalArgs {
  const { values, positionals } = parseCommandArgs('eval', {
    args,
    allowPositionals: true,
    options: {
      out: { type: 'string' },
      workspace: { type: 'string' },
      json: { type: 'boolean', default: false },
      'no-worker': { type: 'boolean', default: false },
    },
  });
  const { FILE: file } = namedPositionals('eval', positionals, ['FILE'] as const);
  const startWorker = !values['no-worker'];
  const stamp = now.toISOString().replace(/[:.]/g, '-');
  return {
    file: path.resolve(cwd, file),
    out: path.resolve(cwd, values.out ?? `eval-${stamp}`),
    ...(values.workspace !== undefined || startWorker
      ? { workspace: path.resolve(cwd, values.workspace ?? '.') }
      : {}),
    startWorker,
    json: values.json,
  };
}

/** An eval file, read and checked; paths in it are relative to its directory. */
export async function readEvalFile(file: string): Promise<EvalFile> {
  let document: unknown;
  try {
    document = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new Error(`cannot read the eval file ${file}: ${(error as Error).message}`);
  }
  const parsed = EvalFileSchema.safeParse(document);
  if (!parsed.success) throw new Error(`the eval file ${file} is not valid: ${schemaProblems(parsed.error)}`);
  const eval_ = parsed.data;
  const here = (relative: string) => path.resolve(path.dirname(file), relative);
  if (eval_.variant.systemPrompt !== undefined && eval_.variant.systemPromptFile !== undefined) {
    throw new Error(`the eval file ${file} gives both systemPrompt and systemPromptFile`);
  }
  for (const entry of eval_.conversations) {
    if (entry.check !== undefined) {
      try {
        new RegExp(entry.check);
      } catch (error) {
        throw new Error(
          `the check of ${entry.source} is not a regular expression: ${(error as Error).message}`,
        );
      }
    }
  }
  return {
    ...eval_,
    variant: {
      ...eval_.variant,
      ...(eval_.variant.systemPromptFile !== undefined
        ? { systemPrompt: await readFile(here(eval_.variant.systemPromptFile), 'utf8') }
        : {}),
    },
    conversations: eval_.conversations.map((entry) => ({
      ...entry,
      source:
        entry.source.includes('/') || entry.source.endsWith('.json') ? here(entry.source) : entry.source,
    })),
  };
}

/**
 * `eval FILE`: reruns every conversation the file lists with its variant, a few at a time, and
 * writes report.json and report.md (per conversation: answers and tools changed, tokens before
 * and after, the check). Exit 0 when every check passed, 1 otherwise.
 */
export async function evalCommand(args: string[], cleanups: Cleanups): Promise<number> {
  const evalArgs = parseEvalArgs(args);
  const file = await readEvalFile(evalArgs.file);
  const { variant } = file;
  if (variant.baseUrl !== undefined && !evalArgs.startWorker) {
    throw new UsageError(
      "the eval file's baseUrl needs eval's own worker: a shared worker calls only the endpoint its operator configured",
    );
  }
  const rerunConnection = await connectRerunAgent(cleanups, {
    startWorker: evalArgs.startWorker,
    ...(variant.baseUrl !== undefined ? { baseUrl: variant.baseUrl } : {}),
  });
  if (!rerunConnection) return 2;
  const connected = await rerunConnection.serve(evalArgs.workspace ?? process.cwd());
  const results: EvalCaseResult[] = new Array(file.conversations.length);
  let next = 0;
  const work = async () => {
    while (next < file.conversations.length) {
      const index = next++;
      results[index] = await runCase(connected, file.conversations[index]!, file, evalArgs);
      if (!evalArgs.json)
        log(`${results[index].source}: ${results[index].error ?? results[index].check ?? 'done'}`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(file.concurrency, file.conversations.length) }, work));
  const report = evalReport(results);
  await mkdir(evalArgs.out, { recursive: true });
  await writeFile(path.join(evalArgs.out, 'report.json'), `${JSON.stringify(report, null, 2)}\n`);
  await writeFile(path.join(evalArgs.out, 'report.md'), evalMarkdown(report));
  if (!evalArgs.json) log(`report: ${path.join(evalArgs.out, 'report.md')}`);
  process.stdout.write(evalArgs.json ? `${JSON.stringify(report)}\n` : printable(evalMarkdown(report)));
  return report.passed === report.checked && results.every((result) => !result.error) ? 0 : 1;
}

async function runCase(
  { agent, client }: ConnectedAgent,
  entry: EvalCase,
  file: EvalFile,
  evalArgs: EvalArgs,
): Promise<EvalCaseResult> {
  const rerunId = `conv-${randomUUID()}`;
  try {
    const { conversationId, executions } = await readHistorySource(client, historySourceArg(entry.source));
    const plan = rerunPlan(
      conversationId,
      executions,
      entry.at ?? 1,
      client.options.loadedDataConverter.payloadConverter,
    );
    const report = await rerunConversation({ agent, client }, plan, executions, rerunId, {
      tools: file.variant.tools,
      ...(file.variant.model !== undefined ? { model: file.variant.model } : {}),
      ...(file.variant.systemPrompt !== undefined ? { systemPrompt: file.variant.systemPrompt } : {}),
      ...(evalArgs.workspace !== undefined ? { workspace: evalArgs.workspace } : {}),
    });
    return evalCaseResult(entry.source, rerunId, report, entry.check);
  } catch (error) {
    return evalCaseResult(entry.source, rerunId, error as Error, entry.check);
  }
}
