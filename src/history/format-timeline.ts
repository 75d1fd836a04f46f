import type { ToolOutcomeStatus } from '../shared/tool-outcome';
import type { Timeline, TimelineItem } from './timeline';

const SHOWN_CHARS = 100;

/** Before the result of a call that ran, what became of it. */
const STATUS_MARKERS: Record<ToolOutcomeStatus, string> = {
  ok: '',
  error: 'error ',
  blocked: 'blocked ',
  aborted: 'interrupted ',
};

/** The timeline for a person: a summary line, then one line per item with its time since the start. */
export function formatTimeline(timeline: Timeline): string {
  const lines = [summaryOf(timeline)];
  for (const item of timeline.items) {
    const run = item.run !== undefined && item.kind !== 'run_started' ? `[run ${item.run}] ` : '';
    lines.push(`${offset(item.offsetMs).padStart(11)}  ${run}${describe(item)}`);
  }
  return `${lines.join('\n')}\n`;
}

function summaryOf({ conversationId, executions, items }: Timeline): string {
  const count = <K extends TimelineItem['kind']>(kind: K) =>
    items.filter((item): item is Extract<TimelineItem, { kind: K }> => item.kind === kind);
  const modelCalls = count('model_call');
  const toolCalls = count('tool_call');
  const tokensIn = modelCalls.reduce((sum, call) => sum + (call.usage?.inputTokens ?? 0), 0);
  const tokensOut = modelCalls.reduce((sum, call) => sum + (call.usage?.outputTokens ?? 0), 0);
  const failedTools = toolCalls.filter((call) => call.isError || call.outcome !== 'completed').length;
  const latest = executions.at(-1);
  return [
    `conversation ${conversationId}: ${plural(executions.length, 'execution')}${latest ? ` (latest ${latest.status.replace(/_/g, ' ')})` : ''}`,
    plural(count('run_started').length, 'run'),
    `${plural(modelCalls.length, 'model call')} (${tokensIn} tokens in, ${tokensOut} out)`,
    `${plural(toolCalls.length, 'tool call')}${failedTools ? ` (${failedTools} not completed or in error)` : ''}`,
  ].join(', ');
}

function describe(item: TimelineItem): string {
  switch (item.kind) {
    case 'execution_started': {
      const carried = item.carried
        ? `; carried ${plural(item.carried.messages, 'message')}, ${item.carried.queuedMessages} queued`
        : '';
      const from = item.continuedFrom ? `, continued from ${item.continuedFrom}` : '';
      return `execution ${item.execution} started (run id ${item.runId}${from}${carried}) on task queue ${item.taskQueue}`;
    }
    case 'user_message':
      return `user message ${item.messageId}${item.sender ? ` from ${item.sender}` : ''}${item.via === 'start' ? ' (in the start input)' : ''}: ${quote(item.text)}`;
    case 'run_started':
      return `run ${item.run} started${item.messageIds.length ? ` (messages ${item.messageIds.join(', ')})` : ''}`;
    case 'model_call': {
      const head = `model call ${item.iteration}${item.model ? ` (${item.model})` : ''}`;
      const timing = [
        item.latencyMs !== undefined ? duration(item.latencyMs) : undefined,
        plural(item.attempts, 'attempt'),
        item.usage ? `${item.usage.inputTokens} in/${item.usage.outputTokens} out tokens` : undefined,
      ]
        .filter(Boolean)
        .join(', ');
      if (item.outcome !== 'completed') {
        return `${head} ${outcomeWords(item.outcome)}: ${timing}${item.error ? `: ${oneLine(item.error)}` : ''}`;
      }
      const asks = item.toolCalls.length
        ? ` asks for ${item.toolCalls.map((call) => call.name).join(', ')}`
        : '';
      const text = item.text ? ` ${quote(item.text)}` : '';
      return `${head}: ${timing} →${text}${asks}`;
    }
    case 'tool_call': {
      const head = `tool ${item.toolName} ${item.toolCallId} ${oneLine(argumentsText(item.arguments), SHOWN_CHARS)}`;
      if (!item.ran)
        return `${head}: not run → ${item.result !== undefined ? quote(item.result) : 'no result recorded'}`;
      const timing = [
        item.durationMs !== undefined ? duration(item.durationMs) : undefined,
        plural(item.attempts ?? 1, 'attempt'),
      ]
        .filter(Boolean)
        .join(', ');
      if (item.outcome !== 'completed' && !(item.aborted && item.result !== undefined)) {
        return `${head}: ${outcomeWords(item.outcome)}: ${timing}${item.error ? `: ${oneLine(item.error)}` : ''}`;
      }
      const marker = STATUS_MARKERS[item.status ?? 'ok'];
      const late =
        item.lateResult !== undefined
          ? ` (answered later, not given to the model: ${quote(item.lateResult)})`
          : '';
      return `${head}: ${timing} → ${marker}${quote(item.result ?? '')}${late}`;
    }
    case 'approval': {
      const decided = `approval of ${item.toolCallId}: ${item.decision} by ${item.by || '(nobody named)'}`;
      const reason = item.reason && item.via !== 'timeout' ? ` (${oneLine(item.reason)})` : '';
      const how = item.via === 'timeout' ? ` (${oneLine(item.reason ?? 'timed out')})` : ` [${item.via}]`;
      return `${decided}${reason}${how}${refusal(item.refused)}`;
    }
    case 'steer': {
      const receipt =
        item.interrupting === undefined ? '' : item.interrupting ? ', interrupting' : ', starting a run';
      return `steer ${item.messageId}: ${quote(item.text)} [${item.via}${receipt}]${refusal(item.refused)}`;
    }
    case 'abort': {
      const by = item.by ? ` by ${item.by}` : '';
      const reason = item.reason ? `: ${quote(item.reason)}` : '';
      const run = item.abortedRun !== undefined ? `, run ${item.abortedRun}` : '';
      return `abort${by}${reason} [${item.via}${run}]${refusal(item.refused)}`;
    }
    case 'end_requested':
      return `end requested${item.reason ? `: ${quote(item.reason)}` : ''}`;
    case 'activity': {
      const timing = [
        item.durationMs !== undefined ? duration(item.durationMs) : undefined,
        plural(item.attempts, 'attempt'),
      ]
        .filter(Boolean)
        .join(', ');
      const outcome = item.outcome === 'completed' ? '' : ` ${outcomeWords(item.outcome)}`;
      return `activity ${item.activityType}${outcome}: ${timing}${item.error ? `: ${oneLine(item.error)}` : ''}`;
    }
    case 'signal':
    case 'update': {
      const result =
        item.result !== undefined ? ` → ${oneLine(JSON.stringify(item.result), SHOWN_CHARS)}` : '';
      return `${item.kind} ${item.name} ${oneLine(JSON.stringify(item.args), SHOWN_CHARS)}${result}${refusal(item.refused)}`;
    }
    case 'continued_as_new':
      return `continued as new → run id ${item.newRunId}`;
    case 'execution_closed':
      return `execution ${item.execution} ${item.status.replace('_', ' ')}${item.detail !== undefined ? `: ${oneLine(typeof item.detail === 'string' ? item.detail : JSON.stringify(item.detail), SHOWN_CHARS)}` : ''}`;
  }
}

function outcomeWords(outcome: string): string {
  return (
    { running: 'still running', failed: 'failed', timed_out: 'timed out', cancelled: 'cancelled' }[outcome] ??
    outcome
  );
}

function refusal(refused: string | undefined): string {
  return refused ? ` refused: ${oneLine(refused)}` : '';
}

function argumentsText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value ?? {});
}

function quote(text: string): string {
  return JSON.stringify(oneLine(text, SHOWN_CHARS));
}

function oneLine(text: string, chars = 200): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= chars ? flat : `${flat.slice(0, chars)}…`;
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

/** A length of time: 850ms, 2.3s, 4m05s, 1h02m. */
export function duration(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)}s`;
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 60) return `${minutes}m${String(Math.floor((ms % 60_000) / 1_000)).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}

/** Time since the conversation started: +1.234s, +2m03.4s, +1h02m03s. */
export function offset(ms: number): string {
  if (ms < 60_000) return `+${(ms / 1_000).toFixed(3)}s`;
  const totalSeconds = Math.floor(ms / 1_000);
  const seconds = String(totalSeconds % 60).padStart(2, '0');
  const minutes = Math.floor(totalSeconds / 60);
  if (minutes < 60) return `+${minutes}m${seconds}s`;
  return `+${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m${seconds}s`;
}
