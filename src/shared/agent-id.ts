import { z } from 'zod';

/** The agent whose durable memory a conversation uses when its options name none. */
export const DEFAULT_AGENT_ID = 'default';

/**
 * An agent id names a directory on the worker's disk (its memory), so it is kept to characters that
 * cannot traverse or separate paths: no dots, slashes, control characters; at most 64.
 */
export const AgentIdSchema = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/,
    "an agent id is 1-64 letters, digits, '_' or '-', starting with a letter or digit",
  );
