import { createHash } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { type A2APushConfig, A2APushConfigSchema, type A2APushConfigChange } from '../../shared/a2a-push';
import type { TaskRef } from '../../shared/a2a-task-parts';
import { UpdateRefusedError } from '../../shared/conversation-errors';
import { schemaProblems } from '../../shared/schema-problems';
import { isPublicAddress } from '../../tools/builtin/network-guard';
import type { GatewayToken } from '../gateway-api';
import type { A2AContext } from './a2a-context';
import { A2AError, invalidParams } from './a2a-errors';
import {
  A2A_ERROR_CODES,
  type A2APushConfigParams,
  A2APushConfigParamsSchema,
  type A2ASendParams,
} from '../../shared/a2a';
import { authorize } from '../gateway-tokens';
import { type Taken, authorizeOnTask, takeMessage } from './a2a-send';

/**
 * Keeps a push notification configuration on the task, for the token that sets it: the task's
 * conversation holds it (in its workflow), so every gateway and worker sees it and none loses it.
 * Without an id, one is made from the URL, so a retried create replaces rather than adds. The URL
 * must be http(s) and, unless the operator allows private addresses, name and resolve to public ones.
 */
export async function setPushConfig(
  a2a: A2AContext,
  token: GatewayToken,
  ref: TaskRef,
  params: A2APushConfigParams,
): Promise<Record<string, unknown>> {
  await authorizeOnTask(a2a, token, 'events', ref);
  const config = await checkedPushConfig(a2a, params);
  await keepPushConfig(a2a, token, ref, config);
  return shown(ref, config);
}

/**
 * SendMessage (or SendStreamingMessage) with a push notification config in its configuration: the
 * config is checked before the message is taken (a wrong one takes nothing), and kept on the task
 * once it is; the task's state at that moment is pushed at once, so nothing before it is missed.
 */
export async function takeWithPushConfig(
  a2a: A2AContext,
  token: GatewayToken,
  params: A2ASendParams,
): Promise<Taken> {
  const given = params.configuration?.taskPushNotificationConfig;
  if (given === undefined || given === null) return takeMessage(a2a, token, params.message);
  const parsed = A2APushConfigParamsSchema.safeParse(given);
  if (!parsed.success)
    throw invalidParams(`invalid taskPushNotificationConfig: ${schemaProblems(parsed.error)}`);
  // Setting a push config follows the task: the token must have `events`, checked before anything is taken.
  authorize(token, 'events', {});
  const config = await checkedPushConfig(a2a, parsed.data);
  const taken = await takeMessage(a2a, token, params.message);
  await keepPushConfig(a2a, token, taken.ref, config);
  return taken;
}

/** The config as it will be kept: its values checked, an id made when it has none, its host public. */
async function checkedPushConfig(a2a: A2AContext, params: A2APushConfigParams): Promise<A2APushConfig> {
  const parsed = A2APushConfigSchema.safeParse({
    id: params.id || `push-${createHash('sha256').update(params.url).digest('hex').slice(0, 16)}`,
    url: params.url,
    ...(params.token ? { token: params.token } : {}),
    ...(params.authentication ? { authentication: params.authentication } : {}),
  });
  if (!parsed.success)
    throw invalidParams(`invalid push notification config: ${schemaProblems(parsed.error)}`);
  if (!a2a.deps.a2aPushAllowPrivate) await assertPublicHost(new URL(parsed.data.url).hostname);
  return parsed.data;
}

function keepPushConfig(a2a: A2AContext, token: GatewayToken, ref: TaskRef, config: A2APushConfig) {
  return change(a2a, ref, { op: 'set', messageId: ref.messageId, owner: token.name, config });
}

export async function getPushConfig(
  a2a: A2AContext,
  token: GatewayToken,
  ref: TaskRef,
  id: string,
): Promise<Record<string, unknown>> {
  const config = (await configsOf(a2a, token, ref)).find((each) => each.id === id);
  if (!config) throw noConfig(ref, id);
  return shown(ref, config);
}

export async function listPushConfigs(a2a: A2AContext, token: GatewayToken, ref: TaskRef) {
  const configs = await configsOf(a2a, token, ref);
  return { configs: configs.map((config) => shown(ref, config)), nextPageToken: '' };
}

export async function deletePushConfig(
  a2a: A2AContext,
  token: GatewayToken,
  ref: TaskRef,
  id: string,
): Promise<null> {
  await authorizeOnTask(a2a, token, 'events', ref);
  await change(a2a, ref, { op: 'delete', messageId: ref.messageId, owner: token.name, id });
  return null;
}

/** The token's own configurations of the task: another token's are not there for it. */
async function configsOf(a2a: A2AContext, token: GatewayToken, ref: TaskRef): Promise<A2APushConfig[]> {
  await authorizeOnTask(a2a, token, 'status', ref);
  return a2a.deps.agent.a2aPushConfigs(ref.contextId, { messageId: ref.messageId, owner: token.name });
}

async function change(a2a: A2AContext, ref: TaskRef, change: A2APushConfigChange): Promise<void> {
  try {
    await a2a.deps.agent.changeA2APushConfig(ref.contextId, change);
  } catch (error) {
    if (!(error instanceof UpdateRefusedError)) throw error;
    if (/has taken no message/.test(error.reason))
      throw new A2AError(A2A_ERROR_CODES.taskNotFound, `no task ${JSON.stringify(ref.taskId)}`);
    if (change.op === 'delete' && /has no push notification config/.test(error.reason))
      throw noConfig(ref, change.id);
    throw invalidParams(error.reason);
  }
}

function noConfig(ref: TaskRef, id: string): A2AError {
  return new A2AError(
    A2A_ERROR_CODES.taskNotFound,
    `task ${JSON.stringify(ref.taskId)} has no push notification config ${JSON.stringify(id)}`,
  );
}

/** A configuration as A2A shows it: with its task's id. */
function shown(ref: TaskRef, config: A2APushConfig): Record<string, unknown> {
  return { taskId: ref.taskId, ...config };
}

/**
 * The host names a public address and resolves to public ones only. The worker checks again on
 * the addresses it connects to, so a name that resolves elsewhere later gains nothing; this check
 * tells the caller at once.
 */
async function assertPublicHost(hostname: string): Promise<void> {
  const host = hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await lookup(host, { all: true })).map((entry) => entry.address);
    } catch (error) {
      throw invalidParams(`push URL host ${host} does not resolve: ${(error as Error).message}`);
    }
  }
  const blocked = addresses.find((address) => !isPublicAddress(address));
  if (blocked !== undefined)
    throw invalidParams(
      `push URL host ${host} ${blocked === host ? 'is' : `resolves to ${blocked}, which is`} a private, loopback or reserved address; this agent pushes to public addresses only`,
    );
}
