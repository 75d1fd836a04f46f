/** The error a non-owner's call to an `ownerOnly` tool gets. */
export const OWNER_ONLY_TOOL_ERROR = 'Tool restricted to owner senders.';

/**
 * Whether a message's sender is one of the conversation's owners. Without `owners` everyone is; with
 * them, a message that names no sender is not. A sender is whatever the caller that signalled the
 * message says, like an approval's `by`: the service in front of the conversation vouches for it.
 */
export function isOwner(sender: string | undefined, owners: readonly string[] | undefined): boolean {
  if (!owners) return true;
  return sender !== undefined && owners.includes(sender.trim());
}
