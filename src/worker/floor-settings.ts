import { createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ApprovalModeSchema, type ApprovalMode } from '../shared/approvals';
import type { ExecSecurityMode } from '../shared/exec-security';
import type { ApproverKeys } from '../shared/signed-decisions';
import {
  type CarriedPart,
  CARRIED_PARTS,
  CarriedPartSchema,
  type WorkerFloors,
} from '../shared/worker-floors';

/**
 * The worker's floors from its environment:
 * - AGENT_WORKSPACE_ROOTS: directories (separated by `:`) a conversation's workspace must lie in;
 *   default: the worker's own workspace.
 * - AGENT_APPROVAL_FLOOR: `tool=mode` pairs, comma-separated (`exec=always,write=ask`, `*=ask`):
 *   the least approval each tool gets.
 * - AGENT_ACCEPT_CARRIED: parts of carried state a conversation may be started with (comma-separated,
 *   or `all`); default none.
 * - the loosest exec security is the worker's own mode (AGENT_EXEC_SECURITY).
 */
export function floorsFromEnv(
  env: NodeJS.ProcessEnv,
  worker: { workspace: string; execSecurity: ExecSecurityMode },
): WorkerFloors {
  const roots = (env.AGENT_WORKSPACE_ROOTS ?? '')
    .split(path.delimiter)
    .map((root) => root.trim())
    .filter(Boolean);
  for (const root of roots) {
    if (!path.isAbsolute(root))
      throw new Error(`AGENT_WORKSPACE_ROOTS holds absolute paths, not ${JSON.stringify(root)}`);
  }
  return {
    workspaceRoots: roots.length > 0 ? roots : [worker.workspace],
    approval: approvalFloorFromText(env.AGENT_APPROVAL_FLOOR ?? ''),
    execSecurity: worker.execSecurity,
    acceptCarried: acceptedCarriedFromText(env.AGENT_ACCEPT_CARRIED ?? ''),
  };
}

function approvalFloorFromText(text: string): Record<string, ApprovalMode> {
  const floor: Record<string, ApprovalMode> = {};
  for (const entry of text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)) {
    const [tool, mode, ...rest] = entry.split('=').map((part) => part.trim());
    const parsed = ApprovalModeSchema.safeParse(mode);
    if (!tool || rest.length > 0 || !parsed.success) {
      throw new Error(`AGENT_APPROVAL_FLOOR takes tool=auto|ask|always pairs, not ${JSON.stringify(entry)}`);
    }
    floor[tool.toLowerCase() === 'bash' ? 'exec' : tool] = parsed.data;
  }
  return floor;
}

function acceptedCarriedFromText(text: string): CarriedPart[] {
  const parts = text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
  if (parts.length === 1 && parts[0] === 'all') return [...CARRIED_PARTS];
  return parts.map((part) => {
    const parsed = CarriedPartSchema.safeParse(part);
    if (!parsed.success) {
      throw new Error(
        `AGENT_ACCEPT_CARRIED takes all or some of ${CARRIED_PARTS.join(', ')}, not ${JSON.stringify(part)}`,
      );
    }
    return parsed.data;
  });
}

/**
 * DURABLE_AGENT_APPROVER_KEYS: a JSON file `{ "<approver name>": "<Ed25519 public key>" }`, each key
 * PEM (`-----BEGIN PUBLIC KEY-----`) or 32 raw bytes in base64. Undefined when unset: decisions
 * need no signature. A file that is set but unreadable or wrong stops the worker.
 */
export function approverKeysFromEnv(env: NodeJS.ProcessEnv): ApproverKeys | undefined {
  const file = env.DURABLE_AGENT_APPROVER_KEYS?.trim();
  if (!file) return undefined;
  let entries: unknown;
  try {
    entries = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`DURABLE_AGENT_APPROVER_KEYS: cannot read ${file}: ${(error as Error).message}`);
  }
  if (typeof entries !== 'object' || entries === null || Array.isArray(entries)) {
    throw new Error(
      `DURABLE_AGENT_APPROVER_KEYS: ${file} must hold an object of approver name -> public key`,
    );
  }
  const keys: ApproverKeys = {};
  for (const [name, key] of Object.entries(entries)) {
    if (typeof key !== 'string')
      throw new Error(`DURABLE_AGENT_APPROVER_KEYS: the key of ${name} is not a string`);
    keys[name] = rawPublicKey(key, name);
  }
  if (Object.keys(keys).length === 0)
    throw new Error(`DURABLE_AGENT_APPROVER_KEYS: ${file} names no approver`);
  return keys;
}

/** An Ed25519 public key as 32 raw bytes in base64url, from PEM or raw base64. */
export function rawPublicKey(text: string, name: string): string {
  try {
    const key = text.includes('BEGIN')
      ? createPublicKey(text)
      : createPublicKey({
          key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(text.trim(), 'base64').toString('base64url') },
          format: 'jwk',
        });
    if (key.asymmetricKeyType !== 'ed25519') throw new Error(`a ${key.asymmetricKeyType} key, not Ed25519`);
    return key.export({ format: 'jwk' }).x!;
  } catch (error) {
    throw new Error(
      `DURABLE_AGENT_APPROVER_KEYS: the key of ${name} is not an Ed25519 public key: ${(error as Error).message}`,
    );
  }
}
