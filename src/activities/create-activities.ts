import { type ModelDeps, createCallModel } from './call-model';
import { type ToolDeps, createRunTool } from './run-tool';
import { TranscriptCache } from './transcript-cache';
import { type TranscriptLoader, loadTranscriptFromWorkflow } from './transcript-loader';

export interface ActivityDeps extends Omit<ModelDeps, 'transcriptCache' | 'loadTranscript'>, ToolDeps {
  transcriptCache?: TranscriptCache;
  loadTranscript?: TranscriptLoader;
}

/** The worker's activities, closed over their dependencies: tests pass fakes, the worker real clients. */
export function createActivities(deps: ActivityDeps) {
  return {
    callModel: createCallModel({
      ...deps,
      transcriptCache: deps.transcriptCache ?? new TranscriptCache(),
      loadTranscript: deps.loadTranscript ?? loadTranscriptFromWorkflow,
    }),
    runTool: createRunTool(deps),
    listTools: async () => deps.tools.descriptors(),
  };
}

export type AgentActivities = ReturnType<typeof createActivities>;
