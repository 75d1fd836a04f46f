import { parseDeployArgs } from '../../src/cli/commands/deploy';
import { usageOf } from '../../src/cli/usage-text';
import { UsageError } from '../../src/cli/usage-error';
import { deploymentVersionFromEnv } from '../../src/worker/deployment-settings';

function usageError(parse: () => unknown): string {
  try {
    parse();
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error('expected a usage error');
}

describe('deploy arguments', () => {
  test.each([
    [['list'], { action: 'list', json: false }],
    [['describe', 'agents', '--json'], { action: 'describe', name: 'agents', json: true }],
    [
      ['set-current', 'agents', 'v2.1.0+abc'],
      { action: 'set-current', name: 'agents', buildId: 'v2.1.0+abc' },
    ],
    [['ramp', 'agents', 'b-2', '12.5'], { action: 'ramp', name: 'agents', buildId: 'b-2', percent: 12.5 }],
    [['ramp', 'agents', 'b-2', '100%'], { action: 'ramp', percent: 100 }],
    [['rollback', 'agents'], { action: 'rollback', name: 'agents' }],
  ])('%j', (args, expected) => {
    expect(parseDeployArgs(args)).toMatchObject(expected);
  });

  test.each([
    [[], 'deploy needs one of list, describe, set-current, ramp, rollback'],
    [['promote', 'agents'], 'deploy: unknown action "promote"'],
    [['describe'], 'deploy describe needs NAME'],
    [['set-current', 'agents'], 'deploy set-current needs BUILD'],
    [['ramp', 'agents', 'b-2'], 'deploy ramp needs PERCENT'],
    [['ramp', 'agents', 'b-2', '101'], 'PERCENT is a number from 0 to 100, not "101"'],
    [['ramp', 'agents', 'b-2', 'half'], 'PERCENT is a number from 0 to 100, not "half"'],
    [['rollback', 'agents', 'b-1'], 'deploy rollback takes NAME; unexpected "b-1"'],
    [['describe', 'my.agents'], 'a deployment name is 1-120 letters'],
    [['set-current', 'agents', '__internal'], 'a build id is 1-120 letters'],
    [['list', '--build', 'x'], "deploy: Unknown option '--build'"],
  ])('%j is a usage error', (args, message) => {
    expect(usageError(() => parseDeployArgs(args))).toContain(message);
  });

  test('the usage names every action', () => {
    expect(usageOf('deploy')).toBe(
      '  durable-agent deploy list|describe NAME|set-current NAME BUILD|ramp NAME BUILD PERCENT|rollback NAME [--json]',
    );
  });
});

describe('a worker’s deployment version from the environment', () => {
  test('unversioned when neither is set, as before deployments', () => {
    expect(deploymentVersionFromEnv({})).toBeUndefined();
  });

  test('both set: the version it polls as', () => {
    expect(
      deploymentVersionFromEnv({ AGENT_DEPLOYMENT_NAME: 'agents', AGENT_BUILD_ID: ' 2026.11.26-a ' }),
    ).toEqual({
      deploymentName: 'agents',
      buildId: '2026.11.26-a',
    });
  });

  test.each([
    [{ AGENT_DEPLOYMENT_NAME: 'agents' }, 'AGENT_DEPLOYMENT_NAME is set but AGENT_BUILD_ID is not'],
    [{ AGENT_BUILD_ID: 'b-1' }, 'AGENT_BUILD_ID is set but AGENT_DEPLOYMENT_NAME is not'],
    [{ AGENT_DEPLOYMENT_NAME: 'a:b', AGENT_BUILD_ID: 'b-1' }, 'a deployment name is'],
  ])('%j stops the worker', (env, message) => {
    expect(() => deploymentVersionFromEnv(env)).toThrow(message);
  });
});
