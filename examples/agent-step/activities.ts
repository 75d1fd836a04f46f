/** Your own activities, beside durable-agent's on the same worker. */
export function createSupportActivities(outbox: string[]) {
  return {
    async sendReply(ticketId: string, reply: string): Promise<string> {
      outbox.push(`${ticketId}: ${reply}`);
      return `sent to ${ticketId}: ${reply}`;
    },
  };
}

export type SupportActivities = ReturnType<typeof createSupportActivities>;
