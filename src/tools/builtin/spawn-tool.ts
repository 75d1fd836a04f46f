import { SPAWN_TOOL_NAME, SpawnArgumentsSchema } from '../../shared/sub-agents';
import { defineWorkflowTool } from '../tool';

/**
 * `sessions_spawn`: a sub-agent with its own task, run as a child conversation. Declared so the
 * model is offered it; the workflow runs it (a child workflow), never a worker.
 */
export const spawnTool = defineWorkflowTool({
  name: SPAWN_TOOL_NAME,
  label: 'Spawn a sub-agent',
  description:
    'Start a sub-agent: a separate conversation with its own task and tools that works on its own and returns its final answer as this tool result. Use it for a self-contained piece of work.',
  parameters: SpawnArgumentsSchema,
  category: 'other',
  idempotent: false,
  // Starting one changes nothing by itself; the sub-agent's own tools ask as they would here.
  risk: 'low',
});
