import {
  type ApprovalMode,
  type ApprovalSettings,
  defaultApprovalMode,
  effectiveApprovalMode,
} from '../shared/approvals';
import type { ToolDescriptor } from '../shared/tool-descriptor';

/** How a call is approved: which tool's mode applies, and what a standing decision on it covers. */
export interface ApprovalSubject {
  mode: ApprovalMode;
  /** The key of standing decisions (allow_always, reject_always): a tool name, or `tool@host`. */
  scope: string;
}

/** Process actions that feed a running process: its stdin may be a shell, so they ask as `exec` does. */
const PROCESS_INPUT_ACTIONS: readonly string[] = ['write'];

/**
 * Decides how one call is approved. Most calls: the tool's own mode, standing decisions per tool.
 * Writing to a background process: `exec`'s mode and standing decisions, since the text may be a
 * command. A tool that reaches hosts (its descriptor lists `hostsWithoutApproval`): runs without
 * asking for those hosts, asks for any other, and standing decisions hold per host; a URL without a
 * host it could reach runs, to be refused by the tool. Pure: the workflow runs it.
 */
export function approvalSubject(
  toolName: string,
  args: Record<string, unknown>,
  tools: ReadonlyMap<string, ToolDescriptor>,
  settings: ApprovalSettings,
): ApprovalSubject {
  const modeOf = (name: string, fallback: ApprovalMode) => {
    const descriptor = tools.get(name);
    const toolDefault = descriptor ? (descriptor.approval ?? defaultApprovalMode(descriptor.risk)) : fallback;
    return effectiveApprovalMode(settings, name, toolDefault);
  };
  if (
    toolName === 'process' &&
    typeof args.action === 'string' &&
    PROCESS_INPUT_ACTIONS.includes(args.action)
  ) {
    return { mode: modeOf('exec', 'ask'), scope: 'exec' };
  }
  const descriptor = tools.get(toolName);
  const hosts = descriptor?.hostsWithoutApproval;
  if (descriptor && hosts) {
    const host = hostOf(args.url);
    // No host that the tool's own parser would reach (not http or https, not a URL): the tool refuses
    // it without connecting anywhere, so asking a person would only hold the run up.
    if (host === undefined) return { mode: 'auto', scope: `${toolName}@?` };
    const toolDefault = hosts.includes(host) ? 'auto' : 'ask';
    return { mode: effectiveApprovalMode(settings, toolName, toolDefault), scope: `${toolName}@${host}` };
  }
  return { mode: modeOf(toolName, 'ask'), scope: toolName };
}

/**
 * The host an http(s) URL reaches, as the WHATWG parser that the fetch itself uses reads it (the
 * workflow sandbox has the same URL class), lower-case and without a trailing dot; undefined when
 * there is none.
 */
export function hostOf(url: unknown): string | undefined {
  if (typeof url !== 'string') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url.trim());
  } catch {
    return undefined;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return undefined;
  return parsed.hostname.toLowerCase().replace(/\.$/, '') || undefined;
}
