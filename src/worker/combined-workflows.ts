import { mkdirSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';

/** The workflows `src/workflows/index.ts` exports, by name. */
export const AGENT_WORKFLOW_NAMES = ['conversation', 'modelLimiter', 'agentDailyBudget'] as const;

const AGENT_WORKFLOWS_DIR = path.resolve(__dirname, '..', 'workflows');

/** The module that exports durable-agent's workflows (the conversation and its companions). */
export function agentWorkflowsModule(): string {
  return require.resolve(AGENT_WORKFLOWS_DIR);
}

/**
 * Loaded before any workflow, so one copy of durable-agent's modules serves every workflow a worker
 * thread has cached: the workflow module, then the step that readies its modules to be shared.
 */
export function agentPreloadModules(workflowsModule = agentWorkflowsModule()): string[] {
  return [workflowsModule, require.resolve(path.join(AGENT_WORKFLOWS_DIR, 'settle-shared-modules'))];
}

/**
 * A worker has one workflow module; a team's worker that adds durable-agent needs theirs and ours
 * in it. This writes (once per pair of paths) a module exporting both and returns its path. Our
 * workflows' names win over a workflow of theirs with the same name, so a conversation is always
 * durable-agent's.
 */
export function workflowsWithAgent(userWorkflowsPath: string): string {
  const ours = agentWorkflowsModule();
  if (path.resolve(userWorkflowsPath) === ours) return ours;
  const theirs = path.resolve(userWorkflowsPath);
  const key = createHash('sha256').update(`${theirs}\n${ours}`).digest('hex').slice(0, 16);
  const dir = path.join(nodeModulesOf(theirs), '.cache', 'durable-agent-workflows', key);
  mkdirSync(dir, { recursive: true });
  const entry = path.join(dir, 'index.js');
  writeFileSync(
    entry,
    [
      '// Written by durable-agent: your workflows and the agent workflows, in one worker.',
      `export * from ${JSON.stringify(theirs)};`,
      `export { ${AGENT_WORKFLOW_NAMES.join(', ')} } from ${JSON.stringify(ours)};`,
      '',
    ].join('\n'),
  );
  return entry;
}

/**
 * The bundler resolves the SDK's own workflow modules from beside the entry, so the entry is written
 * where the team's workflows find `@temporalio/workflow`: under that `node_modules`.
 */
function nodeModulesOf(workflowsPath: string): string {
  const sdk = require.resolve('@temporalio/workflow', { paths: [path.dirname(workflowsPath)] });
  const marker = `${path.sep}node_modules${path.sep}`;
  return sdk.slice(0, sdk.lastIndexOf(marker) + marker.length - 1);
}
