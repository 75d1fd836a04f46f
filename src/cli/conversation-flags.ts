import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ConversationOptionsInput } from '../shared/conversation-options';
import { ExecSecurityModeSchema } from '../shared/exec-security';
import { ToolProfileSchema } from '../shared/tool-catalog';
import { dollarAmount, durationArg, positiveInteger } from './parse-command-args';
import { UsageError } from './usage-error';

/** Flags that set a conversation's options; they count only when the message starts the conversation. */
export const CONVERSATION_OPTION_FLAGS = {
  workspace: { type: 'string' },
  model: { type: 'string' },
  system: { type: 'string' },
  'system-prompt': { type: 'string' },
  'append-system-prompt': { type: 'string' },
  'max-tool-iterations': { type: 'string' },
  approval: { type: 'string' },
  'tool-profile': { type: 'string' },
  /** The tool profile's old flag: cli.ts leaves it to the command only when it names a tool profile. */
  profile: { type: 'string' },
  allow: { type: 'string' },
  'also-allow': { type: 'string' },
  deny: { type: 'string' },
  owners: { type: 'string' },
  'exec-security': { type: 'string' },
  'budget-tokens': { type: 'string' },
  'budget-tool-calls': { type: 'string' },
  'budget-usd': { type: 'string' },
  deadline: { type: 'string' },
} as const;

export interface ConversationOptionValues {
  workspace?: string;
  model?: string;
  /** The system prompt as text; `system-prompt` reads it from a file. Either replaces the default. */
  system?: string;
  'system-prompt'?: string;
  /** A file whose text follows the system prompt (the default or the given one). */
  'append-system-prompt'?: string;
  'max-tool-iterations'?: string;
  approval?: string;
  'tool-profile'?: string;
  /** Deprecated spelling of `tool-profile` (`--profile` names Temporal's client profile now). */
  profile?: string;
  /** Comma-separated, as are `also-allow`, `deny` and `owners`. */
  allow?: string;
  'also-allow'?: string;
  deny?: string;
  owners?: string;
  'exec-security'?: string;
  'budget-tokens'?: string;
  'budget-tool-calls'?: string;
  /** US dollars, priced by the worker's AGENT_MODEL_PRICES. */
  'budget-usd'?: string;
  /** A duration from the conversation's start: `90s`, `30m`, `2h`. */
  deadline?: string;
}

/** A comma-separated flag as a list; an empty flag is an empty list (`--allow ''` allows nothing). */
function commaList(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  return value
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
}

export function conversationOptionsFromFlags(values: ConversationOptionValues): ConversationOptionsInput {
  if (values['tool-profile'] !== undefined && values.profile !== undefined) {
    throw new UsageError('give the tool profile once: --tool-profile NAME');
  }
  const toolProfile = values['tool-profile'] ?? values.profile;
  const profile = toolProfile === undefined ? undefined : ToolProfileSchema.safeParse(toolProfile);
  if (profile && !profile.success) {
    throw new UsageError(`--tool-profile takes ${ToolProfileSchema.options.join(', ')}, got ${toolProfile}`);
  }
  const owners = commaList(values.owners);
  if (owners?.length === 0) throw new UsageError('--owners needs at least one name');
  const listFlag = (key: 'allow' | 'alsoAllow' | 'deny', value: string | undefined) => {
    const list = commaList(value);
    return list ? { [key]: list } : {};
  };
  const execSecurity =
    values['exec-security'] === undefined
      ? undefined
      : ExecSecurityModeSchema.safeParse(values['exec-security']);
  if (execSecurity && !execSecurity.success) {
    throw new UsageError(`--exec-security takes full, sandbox or safe-bin, got ${values['exec-security']}`);
  }
  const approval = values.approval;
  if (approval !== undefined && approval !== 'auto' && approval !== 'ask') {
    throw new UsageError(`--approval takes auto or ask, got ${approval}`);
  }
  return {
    ...(values.workspace !== undefined ? { workspace: path.resolve(values.workspace) } : {}),
    ...(values.model !== undefined ? { model: values.model } : {}),
    ...systemPromptFromFlags(values),
    ...(values['max-tool-iterations'] !== undefined
      ? { maxToolIterations: positiveInteger(values['max-tool-iterations'], '--max-tool-iterations') }
      : {}),
    ...(approval ? { approval: { mode: approval } } : {}),
    ...(profile !== undefined ? { profile: profile.data } : {}),
    ...listFlag('allow', values.allow),
    ...listFlag('alsoAllow', values['also-allow']),
    ...listFlag('deny', values.deny),
    ...(owners !== undefined ? { owners } : {}),
    ...(execSecurity !== undefined ? { execSecurity: execSecurity.data } : {}),
    ...budgetFromFlags(values),
  };
}

/** `--system TEXT` or `--system-prompt FILE`, and `--append-system-prompt FILE`, read now so a bad path fails before anything starts. */
function systemPromptFromFlags(
  values: ConversationOptionValues,
): Pick<ConversationOptionsInput, 'systemPrompt' | 'appendSystemPrompt'> {
  if (values.system !== undefined && values['system-prompt'] !== undefined) {
    throw new UsageError('give the system prompt once: --system TEXT or --system-prompt FILE');
  }
  const systemPrompt = values.system ?? promptFile(values['system-prompt'], '--system-prompt');
  const appendSystemPrompt = promptFile(values['append-system-prompt'], '--append-system-prompt');
  return {
    ...(systemPrompt !== undefined ? { systemPrompt } : {}),
    ...(appendSystemPrompt !== undefined ? { appendSystemPrompt } : {}),
  };
}

function promptFile(file: string | undefined, flag: string): string | undefined {
  if (file === undefined) return undefined;
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(
      `${flag}: cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    );
  }
}

/** `--budget-tokens`, `--budget-tool-calls`, `--deadline` as the `budget` option; none of them, no budget. */
function budgetFromFlags(values: ConversationOptionValues): Pick<ConversationOptionsInput, 'budget'> {
  const tokens = positiveInteger(values['budget-tokens'], '--budget-tokens');
  const toolCalls = positiveInteger(values['budget-tool-calls'], '--budget-tool-calls');
  const deadlineMs = values.deadline === undefined ? undefined : durationArg(values.deadline, '--deadline');
  const usd = dollarAmount(values['budget-usd'], '--budget-usd');
  if (tokens === undefined && toolCalls === undefined && deadlineMs === undefined && usd === undefined)
    return {};
  return {
    budget: {
      ...(tokens !== undefined ? { tokens } : {}),
      ...(usd !== undefined ? { usd } : {}),
      ...(toolCalls !== undefined ? { toolCalls } : {}),
      ...(deadlineMs !== undefined ? { deadlineMs } : {}),
    },
  };
}
