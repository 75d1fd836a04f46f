import { createSendRapNotice } from '../rap/rap-notices';
import type { ToolListing } from '../shared/tool-descriptor';
import { type ModelDeps, createCallModel } from './call-model';
import { type ToolDeps, createRunTool } from './run-tool';
import { createSummarizeTranscript } from './summarize-transcript';
import { TranscriptCache } from './transcript-cache';
import { type TranscriptLoader, loadTranscriptFromWorkflow } from './transcript-loader';

export interface ActivityDeps extends Omit<ModelDeps, 'transcriptCache' | 'loadTranscript'>, ToolDeps {
  transcriptCache?: TranscriptCache;
  loadTranscript?: TranscriptLoader;
  /** RAP tool servers' base URLs, for close_thread and cancel_tool_call notices. */
  rapToolsets?: readonly string[];
}

/** The worker's activities, closed over their dependencies: tests pass fakes, the worker real clients. */
export function createActivities(deps: ActivityDeps) {
  // One cache for both model activities: a summary and the next model call read the same transcript.
  const modelDeps: ModelDeps = {
    ...deps,
    transcriptCache: deps.transcriptCache ?? new TranscriptCache(),
    loadTranscript: deps.loadTranscript ?? loadTranscriptFromWorkflow,
  };
  return {
    callModel: createCallModel(modelDeps),
    summarizeTranscript: createSummarizeTranscript(modelDeps),
    runTool: createRunTool(deps),
    sendRapNotice: createSendRapNotice(deps.rapToolsets ?? []),
    listTools: async (): Promise<ToolListing> => {
      const warnings = await deps.tools.refresh();
      return { tools: deps.tools.descriptors(), warnings };
    },
  };
}

export type AgentActivities = ReturnType<typeof createActivities>;
