import type { WorkerDeploymentVersion } from '@temporalio/common';
import { buildIdProblem, deploymentNameProblem } from '../shared/worker-deployment';

/**
 * The Worker Deployment Version this worker belongs to, from `AGENT_DEPLOYMENT_NAME` and
 * `AGENT_BUILD_ID`; undefined (an unversioned worker, as before deployments existed) when both are
 * unset. One without the other is a mistake an operator would only see when a deploy went wrong,
 * so it stops the worker.
 */
export function deploymentVersionFromEnv(env: NodeJS.ProcessEnv): WorkerDeploymentVersion | undefined {
  const deploymentName = env.AGENT_DEPLOYMENT_NAME?.trim();
  const buildId = env.AGENT_BUILD_ID?.trim();
  if (!deploymentName && !buildId) return undefined;
  if (!deploymentName)
    throw new Error('AGENT_BUILD_ID is set but AGENT_DEPLOYMENT_NAME is not: set both, or neither');
  if (!buildId)
    throw new Error('AGENT_DEPLOYMENT_NAME is set but AGENT_BUILD_ID is not: set both, or neither');
  const problem = deploymentNameProblem(deploymentName) ?? buildIdProblem(buildId);
  if (problem) throw new Error(`AGENT_DEPLOYMENT_NAME/AGENT_BUILD_ID: ${problem}`);
  return { deploymentName, buildId };
}
