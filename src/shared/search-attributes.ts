/**
 * Custom search attributes every conversation keeps up to date when its worker has them registered,
 * so `list` and the Web UI can filter: `DurableAgentStatus = "awaiting_approval"`.
 */
export const SEARCH_ATTRIBUTES = {
  /** The conversation's `agentId` option (`default` when it has none). Keyword. */
  agentId: 'DurableAgentId',
  /** idle, running or awaiting_approval. Keyword. */
  status: 'DurableAgentStatus',
  /** When the status last changed. Datetime. */
  lastActivity: 'DurableAgentLastActivity',
} as const;

/** A conversation's status as its search attribute shows it while it lasts. */
export type VisibleStatus = 'idle' | 'running' | 'awaiting_approval';

/** What each attribute is, as the server's operator API (and `temporal operator search-attribute create`) name types. */
export const SEARCH_ATTRIBUTE_TYPES: Readonly<Record<string, 'Keyword' | 'Datetime'>> = {
  [SEARCH_ATTRIBUTES.agentId]: 'Keyword',
  [SEARCH_ATTRIBUTES.status]: 'Keyword',
  [SEARCH_ATTRIBUTES.lastActivity]: 'Datetime',
};
