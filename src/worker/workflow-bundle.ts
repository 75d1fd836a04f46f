import { existsSync } from 'node:fs';
import path from 'node:path';
import { type BundleOptions, bundleWorkflowCode } from '@temporalio/worker';
import { agentPreloadModules, agentWorkflowsModule } from './combined-workflows';

/** The workflow bundle `npm run build` writes; workers and `replay` use it when present. */
export const PREBUILT_BUNDLE = path.resolve(__dirname, '..', 'workflow-bundle.js');

/**
 * What every bundle of the conversation workflows is built with: its whole module graph preloaded and
 * then settled, so one copy of it serves every workflow a worker thread has cached
 * (src/workflows/shared-module-graph.ts says why and what that asks of a module).
 */
function agentBundlerOptions(workflowsPath: string): Pick<BundleOptions, 'preloadModules'> {
  return { preloadModules: agentPreloadModules(workflowsPath) };
}

/** Where a worker gets its workflow code: a prebuilt bundle when there is one, else bundled at start. */
export function workflowCodeOption(
  bundlePath = existsSync(PREBUILT_BUNDLE) ? PREBUILT_BUNDLE : undefined,
):
  | { workflowBundle: { codePath: string } }
  | { workflowsPath: string; bundlerOptions: Pick<BundleOptions, 'preloadModules'> } {
  return bundlePath ? { workflowBundle: { codePath: bundlePath } } : workflowSourcesOption();
}

/**
 * The workflow sources, bundled when the worker starts: for workers whose interceptors or plugins
 * add modules to the workflow code (tracing), which a prebuilt bundle does not have.
 */
export function workflowSourcesOption(): {
  workflowsPath: string;
  bundlerOptions: Pick<BundleOptions, 'preloadModules'>;
} {
  const workflowsPath = agentWorkflowsModule();
  return { workflowsPath, bundlerOptions: agentBundlerOptions(workflowsPath) };
}

/** Bundles `workflowsPath` (by default the conversation workflows) with the project's bundler options. */
export async function bundleAgentWorkflows(
  options: { workflowsPath?: string; logger?: BundleOptions['logger'] } = {},
): Promise<string> {
  const workflowsPath = options.workflowsPath ?? agentWorkflowsModule();
  const { code } = await bundleWorkflowCode({
    workflowsPath,
    logger: options.logger ?? quietLogger,
    ...agentBundlerOptions(workflowsPath),
  });
  return code;
}

const quietLogger: NonNullable<BundleOptions['logger']> = {
  trace() {},
  debug() {},
  info() {},
  warn: (message, meta) => console.warn(message, meta ?? ''),
  error: (message, meta) => console.error(message, meta ?? ''),
  log() {},
};
