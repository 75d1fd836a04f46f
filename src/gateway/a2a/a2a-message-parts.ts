import {
  A2A_ERROR_CODES,
  type A2AApprovalDecision,
  A2AApprovalDecisionSchema,
  type A2AMessageIn,
} from '../../shared/a2a';
import { schemaProblems } from '../../shared/schema-problems';
import { A2AError, invalidParams } from './a2a-errors';

/** What a caller's message says: its text (its text parts, joined) and the decisions its data parts carry. */
export interface MessageContent {
  text: string;
  decisions: A2AApprovalDecision[];
}

/**
 * Reads a caller's message: text parts and `approval_decision` data parts are taken; a file, a URL
 * or data of another kind is refused (ContentTypeNotSupported) rather than dropped unseen.
 */
export function contentOf(message: A2AMessageIn): MessageContent {
  if (message.role !== 'ROLE_USER') throw invalidParams('a message to this agent has the role ROLE_USER');
  const texts: string[] = [];
  const decisions: A2AApprovalDecision[] = [];
  for (const part of message.parts) {
    if (part.text !== undefined) {
      texts.push(part.text);
    } else if (part.data !== undefined && isDecision(part.data)) {
      const parsed = A2AApprovalDecisionSchema.safeParse(part.data);
      if (!parsed.success) throw invalidParams(`a decision part is wrong: ${schemaProblems(parsed.error)}`);
      decisions.push(parsed.data);
    } else {
      throw new A2AError(
        A2A_ERROR_CODES.contentTypeNotSupported,
        'this agent takes text parts, and data parts of kind approval_decision; not files, URLs or other data',
      );
    }
  }
  return { text: texts.join('\n').trim(), decisions };
}

function isDecision(data: unknown): boolean {
  return (
    typeof data === 'object' && data !== null && (data as { kind?: unknown }).kind === 'approval_decision'
  );
}
