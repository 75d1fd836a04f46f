import { SPAWN_TOOL_NAME, SpawnArgumentsSchema } from '../shared/sub-agents';
import { defineTool } from './tool';
import { ToolError } from './tool-error';

/**
 * `sessions_spawn`: a sub-agent with its own task, run as a child conversation. Registered so the
 * model is offered it; the workflow runs it (a child workflow), so its activity never does.
 */
export const spawnTool = defineTool({
  name: SPAWN_TOOL_NAME,
  label: 'Spawn a sub-agent',
  description:
    'Start a sub-agent: a separate conversation with its own task and tools that works on its own and returns its final answer as this tool result. Use it for a self-contained piece of work.',
  parameters: SpawnArgumentsSchema,
  category: 'other',
  idempotent: false,
  // Starting one changes nothing by itself; the sub-agent's own tools ask as they would here.
  risk: 'low',
  async execute() {
    throw new ToolError(
      'ExecutionFailed',
      `${SPAWN_TOOL_NAME} runs in the conversation workflow, not on a worker`,
    );
  },
});
