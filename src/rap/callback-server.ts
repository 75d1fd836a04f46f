import { BodyTooLargeError, readBoundedBody } from '../platform/bounded-body';
import { rapMessageSignal, rapSubscriptionsQuery } from '../shared/conversation-api';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ActivityNotFoundError, type Client, WorkflowNotFoundError } from '@temporalio/client';
import { z } from 'zod';
import type { ToolResultContent } from '../shared/content';
import { type RapConversationMessage } from '../shared/rap';
import { type RapCallback, RapCallbackSchema } from './rap-toolset';
import type { ToolOutcome } from '../shared/tool-outcome';
import { type ToolResultFinisher, createToolResultFinisher } from '../tools/finish-tool-result';
import { type CallbackBinding, verifyCallbackPath } from './callback-token';

const MAX_BODY_BYTES = 8 * 1024 * 1024;

export interface RapCallbackServer {
  /** The port it listens on (useful when started on port 0). */
  port: number;
  close(): Promise<void>;
}

class Refusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The HTTP endpoint RAP tools call back (rap spec, "Request Transport"). Every URL carries a
 * signed binding to one call of one conversation (callback-token.ts); a forged URL, or a message
 * naming another conversation or call, gets 4xx and changes nothing. A `tool_result` completes the
 * call's activity by task token, once; other messages go to the conversation as `rapMessage`
 * signals; subscription events only while the subscription is active.
 */
export async function startRapCallbackServer(options: {
  /** The Temporal client that completes activities and signals conversations. */
  client: Client;
  /** The key callback URLs are signed with; the RAP tool source must use the same one. */
  secret: Buffer;
  /** The address to listen on. */
  host: string;
  /** The port to listen on; 0 for any free one. */
  port: number;
  /** Where failed callbacks are reported; nowhere when absent. */
  log?: (message: string) => void;
  /** The finishing steps of the worker's tool calls (its hooks included), so a result by callback passes them too. */
  finisher?: ToolResultFinisher;
}): Promise<RapCallbackServer> {
  const finisher = options.finisher ?? createToolResultFinisher();
  const server = http.createServer((request, response) => {
    handle(request)
      .then(() => answer(response, 200, 'ok'))
      .catch((error: unknown) => {
        if (error instanceof Refusal) return answer(response, error.status, error.message);
        options.log?.(`RAP callback failed: ${(error as Error).message}`);
        answer(response, 500, 'the callback could not be processed; try again');
      });
  });

  async function handle(request: http.IncomingMessage): Promise<void> {
    if (request.method !== 'POST') throw new Refusal(405, 'callbacks are POSTed');
    const binding = verifyCallbackPath(new URL(request.url ?? '/', 'http://x').pathname, options.secret);
    if (!binding) throw new Refusal(403, 'not a callback URL this runtime issued');
    const body = await readBoundedBody(request, MAX_BODY_BYTES).catch((error: unknown) => {
      throw error instanceof BodyTooLargeError ? new Refusal(413, 'the body is too large') : error;
    });
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      throw new Refusal(400, 'the body is not JSON');
    }
    const parsed = RapCallbackSchema.safeParse(json);
    if (!parsed.success)
      throw new Refusal(400, `not a RAP callback message: ${z.prettifyError(parsed.error)}`);
    const message = parsed.data;
    if (message.group_id !== binding.conversationId)
      throw new Refusal(403, 'group_id does not match this callback URL');
    const callId =
      message.type === 'subscription_event' ? message.tool_call_id : 'id' in message ? message.id : undefined;
    if (callId !== undefined && callId !== binding.toolCallId)
      throw new Refusal(403, 'the call id does not match this callback URL');
    if (message.type === 'tool_result') return complete(binding, message);
    const handle = options.client.workflow.getHandle(binding.conversationId);
    try {
      if (message.type === 'subscription_event') {
        const active = await handle.query(rapSubscriptionsQuery);
        if (!active.includes(binding.toolCallId))
          throw new Refusal(410, 'no active subscription for this call');
      }
      await handle.signal(rapMessageSignal, conversationMessageOf(message, binding));
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) throw new Refusal(410, 'the conversation has ended');
      throw error;
    }
  }

  async function complete(binding: CallbackBinding, message: Extract<RapCallback, { type: 'tool_result' }>) {
    const content: ToolResultContent[] = message.content ?? [{ type: 'text', text: message.text ?? '' }];
    const details = {
      rap: {
        ...(message.subscription ? { subscription: true } : {}),
        ...(message.display_as ? { displayAs: message.display_as } : {}),
        ...(message.call_id != null ? { callId: message.call_id } : {}),
      },
    };
    // The same finishing steps as a result an activity returns.
    const toolName = binding.toolName ?? 'rap_tool';
    const outcome: ToolOutcome = await finisher.finish(
      { toolName, toolCallId: binding.toolCallId, conversationId: binding.conversationId },
      await finisher.shape(toolName, { content, details }),
    );
    try {
      await options.client.activity.complete(binding.taskToken, outcome);
    } catch (error) {
      // Completed already (a duplicate or a replay), timed out or cancelled: nothing changes.
      if (error instanceof ActivityNotFoundError)
        throw new Refusal(409, 'this call has already been answered or has ended');
      throw error;
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function conversationMessageOf(
  message: Exclude<RapCallback, { type: 'tool_result' }>,
  binding: CallbackBinding,
): RapConversationMessage {
  const { toolCallId } = binding;
  switch (message.type) {
    case 'subscription_event': {
      const { associative, final } = message;
      return {
        type: message.type,
        toolCallId,
        text: message.text,
        ...(associative !== undefined ? { associative } : {}),
        ...(final !== undefined ? { final } : {}),
      };
    }
    case 'user_choice': {
      const { prompt, choices } = message;
      const callId = message.call_id ?? null;
      return {
        type: message.type,
        toolCallId,
        callId,
        prompt,
        choices,
        default: message.default,
        responseUrl: message.response_url,
      };
    }
    case 'oauth':
      return { type: message.type, toolCallId, callId: message.call_id ?? null, authUrl: message.auth_url };
    case 'view_update':
      return { type: message.type, toolCallId, viewType: message.view_type, content: message.content };
  }
}

function answer(response: http.ServerResponse, status: number, text: string): void {
  if (response.headersSent) return;
  response.writeHead(status, { 'content-type': 'text/plain' }).end(text);
}
