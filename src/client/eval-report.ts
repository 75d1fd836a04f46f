import type { RerunReport } from './rerun';

/** One conversation of an eval: what changed between the original and the rerun. */
export interface EvalCaseResult {
  source: string;
  rerunId: string;
  runs: number;
  answersChanged: number;
  toolsChanged: number;
  tokensBefore: number;
  tokensAfter: number;
  /** The rerun's last answer. */
  answer?: string;
  /** `pass`/`fail` against the case's check; absent when it has none. */
  check?: 'pass' | 'fail';
  /** Why the rerun did not finish, when it did not. */
  error?: string;
  /** The rerun's model provider refused to answer (`error` has its words). */
  refused?: true;
}

export interface EvalReport {
  cases: EvalCaseResult[];
  checked: number;
  passed: number;
  /** passed / checked; absent when no case has a check. */
  passRate?: number;
}

/** A case's result from its rerun's report (or the error that stopped it), its check applied. */
export function evalCaseResult(
  source: string,
  rerunId: string,
  report: RerunReport | Error,
  check: string | undefined,
): EvalCaseResult {
  if (report instanceof Error) {
    return {
      source,
      rerunId,
      runs: 0,
      answersChanged: 0,
      toolsChanged: 0,
      tokensBefore: 0,
      tokensAfter: 0,
      ...(check !== undefined ? { check: 'fail' as const } : {}),
      error: report.message,
    };
  }
  const tokens = (side: 'original' | 'rerun') =>
    report.turns.reduce((sum, turn) => sum + turn[side].tokens.input + turn[side].tokens.output, 0);
  const answer = report.turns.at(-1)?.rerun.answer;
  const endedTurn = report.turns.find((turn) => turn.rerun.ended !== undefined)?.rerun;
  const ended = endedTurn?.ended;
  const passed = check !== undefined && answer !== undefined && !ended && new RegExp(check).test(answer);
  return {
    source,
    rerunId,
    runs: report.turns.length,
    answersChanged: report.turns.filter((turn) => turn.answerChanged).length,
    toolsChanged: report.turns.filter((turn) => turn.toolsChanged).length,
    tokensBefore: tokens('original'),
    tokensAfter: tokens('rerun'),
    ...(answer !== undefined ? { answer } : {}),
    ...(check !== undefined ? { check: passed ? ('pass' as const) : ('fail' as const) } : {}),
    ...(ended !== undefined ? { error: ended } : {}),
    ...(endedTurn?.refused ? { refused: true as const } : {}),
  };
}

export function evalReport(cases: EvalCaseResult[]): EvalReport {
  const checked = cases.filter((result) => result.check !== undefined).length;
  const passed = cases.filter((result) => result.check === 'pass').length;
  return { cases, checked, passed, ...(checked > 0 ? { passRate: passed / checked } : {}) };
}

/** The report as a markdown table, a line of totals under it. */
export function evalMarkdown(report: EvalReport): string {
  const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\s+/g, ' ');
  const rows = report.cases.map((result) =>
    [
      cell(result.source),
      result.rerunId,
      String(result.runs),
      `${result.answersChanged}/${result.runs}`,
      `${result.toolsChanged}/${result.runs}`,
      `${result.tokensBefore} → ${result.tokensAfter}`,
      result.check ?? '',
      cell(result.error ?? ''),
    ].join(' | '),
  );
  const totals =
    report.passRate !== undefined
      ? `${report.passed} of ${report.checked} checks passed (${Math.round(report.passRate * 100)}%)`
      : 'no checks';
  return [
    '| conversation | rerun | runs | answers changed | tools changed | tokens before → after | check | error |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map((row) => `| ${row} |`),
    '',
    totals,
    '',
  ].join('\n');
}
