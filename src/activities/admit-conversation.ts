import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type { ApproverKeys } from '../shared/signed-decisions';
import type { WebhookTarget } from '../shared/webhooks';
import {
  type Admission,
  type AdmissionRequest,
  AdmissionRequestSchema,
  type WorkerFloors,
  floorRefusal,
} from '../shared/worker-floors';

export interface AdmissionDeps {
  /** The workspace of a conversation that names none. */
  defaultWorkspace: string;
  /** Absent: workspaces within the default workspace only, approval as each conversation asks, exec as the worker's mode, no carried state from a start. */
  floors?: Partial<WorkerFloors>;
  /** Approver name -> raw Ed25519 public key (base64url); when present, every decision must be signed. */
  approverKeys?: ApproverKeys;
  webhooks?: WebhookTarget[];
  /** The conversation search attributes are registered on the server (the worker checked at its start). */
  searchAttributes?: boolean;
}

/**
 * Run by every conversation as a local activity when an execution starts: the worker holds the
 * conversation's options to its operator's floors (workspace roots, approval, exec security, carried
 * state) and tells it the floors and approver keys it then lives by. A refusal ends the conversation
 * before anything runs.
 */
export function createAdmitConversation(deps: AdmissionDeps) {
  return async (input: AdmissionRequest): Promise<Admission> => {
    // Workflow code sends it, but a workflow of another version (or a hand-made one) may not.
    const parsed = AdmissionRequestSchema.safeParse(input);
    if (!parsed.success) {
      return {
        admitted: false,
        reason: `refused by the worker: a malformed admission request: ${parsed.error.message}`,
      };
    }
    const request = parsed.data;
    const floors: WorkerFloors = {
      workspaceRoots: deps.floors?.workspaceRoots ?? [deps.defaultWorkspace],
      approval: deps.floors?.approval ?? {},
      execSecurity: deps.floors?.execSecurity ?? 'full',
      acceptCarried: deps.floors?.acceptCarried ?? [],
    };
    const workspaceProblem = await workspaceRefusal(
      request.workspace ?? deps.defaultWorkspace,
      floors.workspaceRoots,
    );
    const reason = workspaceProblem ?? floorRefusal(request, floors);
    if (reason) return { admitted: false, reason: `refused by the worker: ${reason}` };
    return {
      admitted: true,
      approvalFloor: floors.approval,
      ...(deps.approverKeys ? { approverKeys: deps.approverKeys } : {}),
      ...(deps.webhooks?.length ? { webhooks: deps.webhooks } : {}),
      ...(deps.searchAttributes ? { searchAttributes: true } : {}),
    };
  };
}

async function workspaceRefusal(workspace: string, roots: readonly string[]): Promise<string | undefined> {
  if (!path.isAbsolute(workspace))
    return `the workspace must be an absolute path, not ${JSON.stringify(workspace)}`;
  let real: string;
  try {
    real = await realpath(workspace);
    if (!(await stat(real)).isDirectory()) return `the workspace ${workspace} is not a directory`;
  } catch {
    return `the workspace ${workspace} does not exist`;
  }
  for (const root of roots) {
    const realRoot = await realpath(root).catch(() => undefined);
    if (realRoot === undefined) continue;
    const relative = path.relative(realRoot, real);
    const outside = relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative);
    if (!outside) return undefined;
  }
  return `the workspace ${workspace} lies outside the directories this worker serves (${roots.join(', ')})`;
}
