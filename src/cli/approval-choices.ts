import type { ApprovalDecisionKind } from '../shared/approvals';

/** `approve`'s flags: allow once by default; --always makes it stick, --reject refuses. */
export function decisionFromFlags(flags: { always: boolean; reject: boolean }): ApprovalDecisionKind {
  if (flags.reject) return flags.always ? 'reject_always' : 'reject_once';
  return flags.always ? 'allow_always' : 'allow_once';
}

export const PROMPT_CHOICES = 'allow [o]nce, allow [a]lways, [r]eject';

/** An answer to the terminal prompt, or undefined when it is none of the choices. */
export function decisionFromAnswer(answer: string): ApprovalDecisionKind | undefined {
  switch (answer.trim().toLowerCase()) {
    case 'o':
    case 'once':
    case 'y':
    case 'yes':
      return 'allow_once';
    case 'a':
    case 'always':
      return 'allow_always';
    case 'r':
    case 'reject':
    case 'n':
    case 'no':
      return 'reject_once';
    default:
      return undefined;
  }
}

/** A run waiting for its agent's next UTC day: no allow can raise the operator's cap, only a reject stops it. */
export const WAIT_OR_REJECT_CHOICES = '[w]ait for the next day, [r]eject';

/** An answer to the wait-or-reject prompt, or undefined when it is neither. */
export function waitOrRejectFromAnswer(answer: string): 'wait' | 'reject_once' | undefined {
  switch (answer.trim().toLowerCase()) {
    case 'w':
    case 'wait':
      return 'wait';
    case 'r':
    case 'reject':
      return 'reject_once';
    default:
      return undefined;
  }
}

export const shellWord = (word: string) =>
  /^[\w.:@/-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;

/** The command someone else can run to decide a pending approval. */
export function approveCommandLine(conversationId: string, toolCallId: string): string {
  return `durable-agent approve ${shellWord(conversationId)} ${shellWord(toolCallId)}`;
}
