import type { DataConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { agentDataConverter } from './data-converter';
import { workflowCodeOption } from './workflow-bundle';

export interface HistoryToReplay {
  workflowId: string;
  history: temporal.api.history.v1.IHistory | unknown;
}

export interface ReplayOutcome {
  workflowId: string;
  runId: string;
  /** Absent when the history replayed. */
  failure?: {
    /** `nondeterminism`: today's code does not do what the history records; `error`: anything else. */
    kind: 'nondeterminism' | 'error';
    message: string;
  };
}

export interface ReplayOptions {
  /** A prebuilt workflow bundle; by default the one `npm run build` writes, else the workflows are bundled now. */
  workflowBundlePath?: string;
  /** Must decode what the conversation's workers encoded. Default: `agentDataConverter()`. */
  dataConverter?: DataConverter;
}

/**
 * Replays histories, one after another, against the current workflow code with
 * `Worker.runReplayHistories`; one outcome per history, in order. Nothing reaches a server.
 */
export async function replayHistories(
  histories: HistoryToReplay[],
  options: ReplayOptions = {},
): Promise<ReplayOutcome[]> {
  const outcomes: ReplayOutcome[] = [];
  const results = Worker.runReplayHistories(
    {
      ...workflowCodeOption(options.workflowBundlePath),
      dataConverter: options.dataConverter ?? agentDataConverter(),
      replayName: 'durable-agent-replay',
    },
    histories,
  );
  for await (const result of results) {
    const { error } = result;
    outcomes.push({
      workflowId: result.workflowId,
      runId: result.runId,
      ...(error
        ? {
            failure: {
              kind: error.name === 'DeterminismViolationError' ? 'nondeterminism' : 'error',
              message: error.message,
            },
          }
        : {}),
    });
  }
  return outcomes;
}
