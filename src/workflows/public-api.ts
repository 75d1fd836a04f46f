// Placeholder for the `durable-agent/workflow` entry point; the real public API replaces it.
export { conversation } from './conversation';
