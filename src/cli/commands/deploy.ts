import { WorkerDeployments } from '../../client/worker-deployments';
import { buildIdProblem, deploymentNameProblem } from '../../shared/worker-deployment';
import type {
  CurrentChange,
  WorkerDeploymentListing,
  WorkerDeploymentState,
} from '../../shared/worker-deployment-state';
import { type Cleanups, log } from '../cleanups';
import { connectAgent } from '../connect-agent';
import { namedPositionals, parseCommandArgs } from '../parse-command-args';
import { UsageError } from '../usage-error';

export type DeployArgs = { json: boolean } & (
  | { action: 'list' }
  | { action: 'describe' | 'rollback'; name: string }
  | { action: 'set-current'; name: string; buildId: string }
  | { action: 'ramp'; name: string; buildId: string; percent: number }
);

const ACTIONS = ['list', 'describe', 'set-current', 'ramp', 'rollback'] as const;

export function parseDeployArgs(args: string[]): DeployArgs {
  const { values, positionals } = parseCommandArgs('deploy', {
    args,
    allowPositionals: true,
    options: { json: { type: 'boolean', default: false } },
  });
  const [action, ...rest] = positionals;
  const json = values.json;
  switch (action) {
    case 'list':
      namedPositionals('deploy list', rest, [] as const);
      return { action, json };
    case 'describe':
    case 'rollback': {
      const { NAME } = namedPositionals(`deploy ${action}`, rest, ['NAME'] as const);
      return { action, name: deploymentNameArg(NAME), json };
    }
    case 'set-current': {
      const { NAME, BUILD } = namedPositionals('deploy set-current', rest, ['NAME', 'BUILD'] as const);
      return { action, name: deploymentNameArg(NAME), buildId: buildIdArg(BUILD), json };
    }
    case 'ramp': {
      const { NAME, BUILD, PERCENT } = namedPositionals('deploy ramp', rest, [
        'NAME',
        'BUILD',
        'PERCENT',
      ] as const);
      return {
        action,
        name: deploymentNameArg(NAME),
        buildId: buildIdArg(BUILD),
        percent: percentArg(PERCENT),
        json,
      };
    }
    default:
      throw new UsageError(
        action === undefined
          ? `deploy needs one of ${ACTIONS.join(', ')}`
          : `deploy: unknown action ${JSON.stringify(action)}; one of ${ACTIONS.join(', ')}`,
      );
  }
}

function deploymentNameArg(name: string): string {
  const problem = deploymentNameProblem(name);
  if (problem) throw new UsageError(`deploy: ${problem}`);
  return name;
}

function buildIdArg(buildId: string): string {
  const problem = buildIdProblem(buildId);
  if (problem) throw new UsageError(`deploy: ${problem}`);
  return buildId;
}

/** A share of new conversations, 0 to 100 (decimals allowed, as Temporal takes them). */
function percentArg(text: string): number {
  const percent = Number(text.replace(/%$/, ''));
  if (text.trim() === '' || !Number.isFinite(percent) || percent < 0 || percent > 100) {
    throw new UsageError(`deploy ramp: PERCENT is a number from 0 to 100, not ${JSON.stringify(text)}`);
  }
  return percent;
}

export function formatDeploymentListing(listing: WorkerDeploymentListing): string {
  const parts = [
    listing.name,
    `current ${listing.current ?? '(unversioned workers)'}`,
    listing.ramping ? `ramping ${listing.ramping.buildId} at ${listing.ramping.percent}%` : undefined,
  ];
  return parts.filter(Boolean).join('  ');
}

export function formatDeploymentState(state: WorkerDeploymentState): string {
  const versions = state.versions.map((version) =>
    [
      `  ${version.buildId}`,
      version.status,
      version.createdAt ? `created ${version.createdAt.toISOString()}` : undefined,
      version.pinnedOpen !== undefined ? `${version.pinnedOpen} open conversations pinned to it` : undefined,
      version.drainedAt ? `drained ${version.drainedAt.toISOString()}` : undefined,
    ]
      .filter(Boolean)
      .join('  '),
  );
  return [formatDeploymentListing(state), ...versions].join('\n');
}

/**
 * `deploy`: Temporal's Worker Deployments of the namespace. `list`, `describe NAME`, and the
 * routing changes of a deploy: `set-current NAME BUILD`, `ramp NAME BUILD PERCENT`, `rollback NAME`.
 */
export async function deployCommand(args: string[], cleanups: Cleanups): Promise<number> {
  const deploy = parseDeployArgs(args);
  const { client, settings } = await connectAgent(cleanups, { startServer: false });
  const deployments = new WorkerDeployments(client.workflowService, settings.namespace);
  const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);
  switch (deploy.action) {
    case 'list': {
      let shown = 0;
      for await (const listing of deployments.list()) {
        shown++;
        process.stdout.write(
          deploy.json ? `${JSON.stringify(listing)}\n` : `${formatDeploymentListing(listing)}\n`,
        );
      }
      if (shown === 0 && !deploy.json) log('no worker deployments (no worker has set AGENT_DEPLOYMENT_NAME)');
      return 0;
    }
    case 'describe': {
      const state = await deployments.describe(deploy.name);
      process.stdout.write(deploy.json ? `${JSON.stringify(state)}\n` : `${formatDeploymentState(state)}\n`);
      return 0;
    }
    case 'set-current': {
      const change = await deployments.setCurrent(deploy.name, deploy.buildId);
      if (deploy.json) print({ deployment: deploy.name, current: deploy.buildId, ...change });
      else log(currentChanged(deploy.name, deploy.buildId, change));
      return 0;
    }
    case 'rollback': {
      const { current, ...change } = await deployments.rollback(deploy.name);
      if (deploy.json) print({ deployment: deploy.name, current, ...change });
      else log(currentChanged(deploy.name, current, change));
      return 0;
    }
    case 'ramp': {
      await deployments.ramp(deploy.name, deploy.buildId, deploy.percent);
      if (deploy.json) print({ deployment: deploy.name, ramping: deploy.buildId, percent: deploy.percent });
      else {
        log(
          `${deploy.name}: ${deploy.percent}% of new conversations (and of those continuing as new) start on ${deploy.buildId}`,
        );
      }
      return 0;
    }
  }
}

function currentChanged(name: string, current: string, change: CurrentChange): string {
  const lines = [`${name}: new conversations, and conversations continuing as new, start on ${current}`];
  if (change.previous) {
    lines.push(
      `${change.pinned} open conversations pinned to ${change.previous} finish their run there, then move; keep its workers until \`deploy describe ${name}\` shows none left`,
    );
  }
  if (!change.routed)
    lines.push('the new routing has not reached every task queue yet; it goes on by itself');
  return lines.join('\n');
}
