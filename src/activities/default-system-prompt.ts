import { DEFAULT_TIMEOUT_S as EXEC_TIMEOUT_S } from '../tools/exec/exec';
import type { AgentsFile } from './agents-files';

/** What the default system prompt states; each fact looked up by the worker at the run's start. */
export interface PromptFacts {
  workspace: string;
  /** The UTC date, YYYY-MM-DD and weekday: a day's runs send the same bytes, so the prefix stays cached. */
  date: string;
  /** e.g. `linux x64`. */
  platform: string;
  tools: Array<{ name: string; asks: boolean }>;
  approvalTimeoutMs?: number;
  agentsFiles: AgentsFile[];
}

/**
 * The system prompt of a conversation that sets none: where the agent works and when, the tools'
 * conventions, when to stop, and the project's own instructions. Short on purpose: every model
 * call sends it.
 */
export function defaultSystemPrompt(facts: PromptFacts): string {
  const sections = [
    'You are an agent working for a person through tools. Keep going until the task is done, then stop.',
    environmentSection(facts),
    toolsSection(facts),
    [
      '# When to stop',
      '- When the task is done, or you need something only the person can give, answer in plain text without calling a tool: say what you did and what is left.',
      '- Check your work yourself (read the file back, run the tests) rather than asking whether it worked.',
    ].join('\n'),
    agentsSection(facts.agentsFiles),
  ];
  return sections.filter((section) => section !== '').join('\n\n');
}

function environmentSection({ workspace, date, platform }: PromptFacts): string {
  return [
    '# Environment',
    `- Workspace: ${workspace}. Paths you give tools are relative to it; files outside it are refused.`,
    `- Date: ${date}. Platform: ${platform}.`,
  ].join('\n');
}

function toolsSection({ tools, approvalTimeoutMs }: PromptFacts): string {
  if (tools.length === 0) return '# Tools\n- None are offered: answer from what you know.';
  const names = new Set(tools.map((tool) => tool.name));
  const asking = tools.filter((tool) => tool.asks).map((tool) => tool.name);
  const lines = [
    '# Tools',
    '- The tool calls of one reply run at the same time: call independent tools together.',
  ];
  if (asking.length > 0) {
    const wait =
      approvalTimeoutMs !== undefined
        ? ` (a person has ${approvalDuration(approvalTimeoutMs)} to decide)`
        : '';
    lines.push(
      `- Calls to ${asking.join(', ')} wait for a person's approval before they run${wait}.`,
      '- A rejected call comes back with the reason as its result: do not make the same call again; change course, or ask.',
    );
  }
  if (names.has('exec')) {
    lines.push(
      `- exec stops a command after its timeout (${EXEC_TIMEOUT_S} s unless you set one); run longer commands with background: true and follow them with process.`,
    );
  }
  return lines.join('\n');
}

function agentsSection(files: AgentsFile[]): string {
  if (files.length === 0) return '';
  const parts = files.map((file) =>
    'text' in file ? `## ${file.path}\n\n${file.text}` : `## ${file.path}\n\n(not read: ${file.skipped})`,
  );
  return ['# Project instructions (AGENTS.md, outermost first; the nearest wins)', ...parts].join('\n\n');
}

function approvalDuration(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  return `${Math.round(ms / 1_000)} s`;
}
