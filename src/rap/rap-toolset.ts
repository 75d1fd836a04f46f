import { z } from 'zod';

/** A toolset as its server's `/.well-known/rap-toolset` serves it (rap spec, "Toolsets"). */
export const RapToolDefinitionSchema = z.object({
  name: z
    .string()
    .min(1)
    .max(128)
    .regex(/^[A-Za-z0-9_-]+$/, 'ASCII letters, digits, _ and - only'),
  description: z.string(),
  inputSchema: z
    .record(z.string(), z.unknown())
    .refine((schema) => schema.type === undefined || schema.type === 'object', {
      message: 'inputSchema must describe an object',
    }),
  annotations: z
    .object({
      readOnly: z.boolean().optional(),
      destructive: z.boolean().optional(),
      idempotent: z.boolean().optional(),
      longRunning: z.boolean().optional(),
      requiresAuth: z.string().optional(),
    })
    .loose()
    .optional(),
  displayScript: z.string().optional(),
});
export type RapToolDefinition = z.infer<typeof RapToolDefinitionSchema>;

export const RapToolsetSchema = z
  .object({
    name: z.string().min(1).max(128),
    description: z.string().optional(),
    endpoint: z.string().url(),
    tools: z.array(RapToolDefinitionSchema).min(1),
    needsMigration: z.boolean().optional(),
  })
  .refine((toolset) => new Set(toolset.tools.map((tool) => tool.name)).size === toolset.tools.length, {
    message: 'tool names must be unique within the toolset',
  });
export type RapToolset = z.infer<typeof RapToolsetSchema>;

/**
 * An image item of a result's `content`: the spec names its type `mediaType`; `mimeType` (MCP's
 * name) is taken too. Either way it becomes the runtime's image content.
 */
const RapImageItemSchema = z
  .object({
    type: z.literal('image'),
    data: z.string(),
    mediaType: z.string().min(1).optional(),
    mimeType: z.string().min(1).optional(),
  })
  .refine((item) => item.mediaType !== undefined || item.mimeType !== undefined, {
    message: 'an image item needs its mediaType',
  })
  .transform((item) => ({
    type: 'image' as const,
    data: item.data,
    mimeType: (item.mediaType ?? item.mimeType)!,
  }));

const callIds = {
  group_id: z.string().min(1),
  id: z.string().min(1),
  call_id: z.string().nullable().optional(),
};

/** What a tool may POST to its callback URL (rap spec, "Request Transport": five message types). */
export const RapCallbackSchema = z.discriminatedUnion('type', [
  z
    .object({
      type: z.literal('tool_result'),
      ...callIds,
      text: z.string().optional(),
      content: z
        .array(z.union([z.object({ type: z.literal('text'), text: z.string() }), RapImageItemSchema]))
        .optional(),
      display_as: z.array(z.unknown()).optional(),
      subscription: z.boolean().optional(),
    })
    .refine((message) => message.text !== undefined || message.content !== undefined, {
      message: 'a tool_result needs text or content',
    }),
  z.object({
    type: z.literal('subscription_event'),
    group_id: z.string().min(1),
    tool_call_id: z.string().min(1),
    text: z.string(),
    associative: z.boolean().optional(),
    final: z.boolean().optional(),
  }),
  z
    .object({
      type: z.literal('user_choice'),
      ...callIds,
      prompt: z.string(),
      choices: z.array(z.string()).min(1),
      default: z.number().int().min(0),
      response_url: z.string().url(),
    })
    .refine((message) => message.default < message.choices.length, {
      message: 'default must be an index into choices',
      path: ['default'],
    }),
  z.object({ type: z.literal('oauth'), ...callIds, auth_url: z.string().url() }),
  z.object({
    type: z.literal('view_update'),
    group_id: z.string().min(1),
    view_type: z.string().min(1),
    content: z.record(z.string(), z.unknown()),
  }),
]);
export type RapCallback = z.infer<typeof RapCallbackSchema>;
