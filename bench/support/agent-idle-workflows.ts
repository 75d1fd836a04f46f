/**
 * durable-agent's workflows with the empty one beside them. A workflow's context instantiates every
 * module of its bundle, so an empty workflow run from durable-agent's bundle costs what those
 * modules cost per cached workflow, and nothing of a conversation's own state.
 */
export * from '../../src/workflows';
export { idleWorkflow } from './bare-workflow';
