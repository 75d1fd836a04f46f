/**
 * Names of Worker Deployment Versions, as workers declare them and `deploy` commands name them.
 * Temporal refuses a deployment name with `.` or `:` (its older version strings join the two with
 * them) and either part starting with `__` (its own); the rest of the limits are ours, so that a
 * name fits a shell and a log line unquoted.
 */

const DEPLOYMENT_NAME = /^(?!__)[A-Za-z0-9_-]{1,120}$/;
const BUILD_ID = /^(?!__)[A-Za-z0-9._+-]{1,120}$/;

/** Why `name` cannot name a worker deployment, or undefined when it can. */
export function deploymentNameProblem(name: string): string | undefined {
  return DEPLOYMENT_NAME.test(name)
    ? undefined
    : `a deployment name is 1-120 letters, digits, _ and - (no . or :, not starting with __), not ${JSON.stringify(name)}`;
}

/** Why `buildId` cannot name a build, or undefined when it can. */
export function buildIdProblem(buildId: string): string | undefined {
  return BUILD_ID.test(buildId)
    ? undefined
    : `a build id is 1-120 letters, digits, ., _, + and - (not starting with __), not ${JSON.stringify(buildId)}`;
}
