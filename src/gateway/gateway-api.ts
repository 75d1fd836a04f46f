import { z } from 'zod';
import { ApprovalDecisionKindSchema } from '../shared/approvals';
import { BudgetRaiseSchema } from '../shared/budget';
import { ConversationOptionsSchema } from '../shared/conversation-options';

/** What a gateway token may do; each route needs one. */
export const GatewayActionSchema = z.enum([
  'start',
  'send',
  'steer',
  'abort',
  'approve',
  'end',
  'status',
  'events',
]);
export type GatewayAction = z.infer<typeof GatewayActionSchema>;

/**
 * One token of the gateway's token file. The token itself is kept only as its SHA-256 (`sha256`);
 * `token` (the plain text) is accepted for development. Absent `agents` or `conversationPrefixes`
 * mean any; `actions` is always explicit. Every object of the file and every request body is strict:
 * an unknown key (`agent` for `agents`) is refused by name, never dropped with the limit it meant.
 */
export const GatewayTokenSchema = z
  .strictObject({
    /** The identity requests with this token act as: the sender of its messages, the approver of its decisions. */
    name: z.string().trim().min(1).max(128),
    sha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/, 'sha256 is 64 lowercase hex digits')
      .optional(),
    token: z.string().min(16, 'a plain token has at least 16 characters').optional(),
    actions: z.array(z.union([GatewayActionSchema, z.literal('*')])).min(1),
    agents: z.array(z.string().min(1)).min(1).optional(),
    conversationPrefixes: z.array(z.string().min(1)).min(1).optional(),
    /** ISO 8601; the token is refused from then on. */
    expiresAt: z.iso.datetime({ offset: true }).optional(),
  })
  .refine((entry) => (entry.sha256 === undefined) !== (entry.token === undefined), {
    message: 'each token has exactly one of sha256 and token',
  });
export type GatewayToken = z.infer<typeof GatewayTokenSchema>;
export const GatewayTokenFileSchema = z.strictObject({ tokens: z.array(GatewayTokenSchema).min(1) });

export const StartConversationBodySchema = z.strictObject({
  /** A new id when absent. */
  id: z.string().min(1).optional(),
  /** Conversation options, as `AgentClient.start` takes them (strictly); the worker's floors still hold. */
  options: ConversationOptionsSchema.optional(),
  /** A first message, sent at once. */
  text: z.string().min(1).optional(),
});

export const MessageBodySchema = z.strictObject({
  text: z.string().min(1, 'text is empty'),
  messageId: z.string().min(1).optional(),
});

export const AbortBodySchema = z.strictObject({ reason: z.string().optional() });
export const EndBodySchema = z.strictObject({ reason: z.string().optional() });

export const ApproveBodySchema = z.strictObject({
  decision: ApprovalDecisionKindSchema,
  /** The SHA-256 of the arguments the service decided on: required, so a decision never covers what it did not see. */
  argumentsSha256: z.string().regex(/^[0-9a-f]{64}$/, 'argumentsSha256 is 64 lowercase hex digits'),
  reason: z.string().optional(),
  /** A signature the service made itself, as the token's identity; otherwise the gateway signs when it has a key. */
  signature: z.string().min(1).optional(),
  signatureExpiresAt: z.number().int().positive().optional(),
  /** On an allow of a budget pause (`budget-N`): how much more the run may spend; the original budget's amount when absent. */
  raise: BudgetRaiseSchema.optional(),
});
