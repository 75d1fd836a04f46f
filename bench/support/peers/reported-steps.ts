import { preciseNow } from '../clock';
import { type LoopSteps, loopSteps } from '../loop-steps';
import { reportTool } from '../protocol';

/**
 * The turn loop's two steps for the peers that take them as they are (Restate, DBOS): the same
 * OpenAI client, stream assembly and tool implementations as durable-agent's activities and the
 * floor (loop-steps.ts), each tool telling the runner when it starts (for the crash bench).
 */
export function reportedSteps(modelBaseUrl: string): LoopSteps {
  const steps = loopSteps(modelBaseUrl);
  return {
    callModel: (transcript) => steps.callModel(transcript),
    runTool(call) {
      reportTool({ event: 'start', tool: call.name, toolCallId: call.id, at: preciseNow() });
      return steps.runTool(call);
    },
  };
}
