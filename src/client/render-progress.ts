import type { FollowItem } from './agent-client';

const oneLine = (text: string, max = 160) => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

/** A line for the terminal (stderr) per thing worth seeing, or undefined for nothing. */
export function renderProgress(item: FollowItem): string | undefined {
  if (item.kind === 'progress') {
    const { progress } = item;
    if (progress.kind === 'model') return undefined;
    const text = progress.text ? oneLine(progress.text.split('\n').filter(Boolean).pop() ?? '') : '';
    const details = progress.details !== undefined ? oneLine(JSON.stringify(progress.details), 80) : '';
    const shown = [text, details].filter(Boolean).join(' ');
    return shown ? `  … ${progress.toolName} ${shown}` : undefined;
  }
  const { event } = item;
  switch (event.type) {
    case 'tool_execution_start':
      return `→ ${event.toolName} ${oneLine(event.args, 120)}`;
    case 'tool_execution_end':
      return `${event.isError ? '✗' : '✓'} ${event.toolName} ${oneLine(event.preview, 120)}`;
    case 'model_response':
      return event.toolCalls.length && event.text ? `· ${oneLine(event.text)}` : undefined;
    case 'error':
      return `! ${event.message}`;
    default:
      return undefined;
  }
}
