/** Conversation ids become workflow ids: printable, no whitespace, bounded. */
export function assertConversationId(id: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/.test(id)) {
    throw new Error(
      `invalid conversation id ${JSON.stringify(id)}: use 1-200 letters, digits, '.', '_', ':' or '-', starting with a letter or digit`,
    );
  }
  return id;
}
