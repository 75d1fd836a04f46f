import { z } from 'zod';

/** A server's name prefixes its tools (`{server}__{tool}`), so it is a plain identifier without `__`. */
const ServerNameSchema = z
  .string()
  .regex(/^[a-zA-Z0-9-]+(_[a-zA-Z0-9-]+)*$/, 'letters, digits, - and single _ only');

const common = {
  /** Each call's timeout (the tool activity's start-to-close), ms. Default 120000. */
  timeoutMs: z.number().int().positive().optional(),
};

/**
 * An MCP server is started by `command` (stdio) or reached at `url` (streamable HTTP). Both forms
 * refuse unknown keys: a misspelled `timeoutMs` or `headers` must not be dropped silently.
 */
export const McpServerConfigSchema = z.union([
  z.strictObject({
    command: z.string().min(1),
    args: z.array(z.string()).optional(),
    env: z.record(z.string(), z.string()).optional(),
    cwd: z.string().optional(),
    ...common,
  }),
  z.strictObject({
    url: z.string().url(),
    headers: z.record(z.string(), z.string()).optional(),
    ...common,
  }),
]);
export type McpServerConfig = z.infer<typeof McpServerConfigSchema>;

export const McpServersConfigSchema = z.record(ServerNameSchema, McpServerConfigSchema);
export type McpServersConfig = z.infer<typeof McpServersConfigSchema>;
