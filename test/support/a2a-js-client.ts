import { randomUUID } from 'node:crypto';
import type { Part, StreamResponse } from '@a2a-js/sdk';
import {
  type Client,
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';

/**
 * The A2A JavaScript SDK's client, as another team builds it (not our client library), and the
 * few words the A2A tests read its messages with.
 */

/** Where each update carries the cursor a client resubscribes with. */
export const A2A_CURSOR = 'durable-agent/cursor';

/** The SDK's client for the agent at `baseUrl`, presenting `token` on every request. */
export async function a2aClientFor(baseUrl: string, token: string): Promise<Client> {
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${token}`);
    return fetch(input, { ...init, headers });
  };
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
    }),
  );
  return factory.createFromUrl(baseUrl);
}

export const textPart = (text: string): Part => ({
  content: { $case: 'text', value: text },
  metadata: undefined,
  filename: '',
  mediaType: '',
});

export const dataPart = (value: unknown): Part => ({
  content: { $case: 'data', value },
  metadata: undefined,
  filename: '',
  mediaType: '',
});

/** A SendMessage request of a user message with `parts`. */
export function a2aRequest(
  parts: Part[],
  ids: { messageId?: string; taskId?: string; contextId?: string } = {},
) {
  return {
    tenant: '',
    message: {
      messageId: ids.messageId ?? randomUUID(),
      contextId: ids.contextId ?? '',
      taskId: ids.taskId ?? '',
      role: 1,
      parts,
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    },
    configuration: undefined,
    metadata: undefined,
  };
}

export async function collect(stream: AsyncGenerator<StreamResponse>): Promise<StreamResponse[]> {
  const events: StreamResponse[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** The task's state an event says, if it says one. */
export const stateOf = (event: StreamResponse) =>
  event.payload?.$case === 'statusUpdate'
    ? event.payload.value.status?.state
    : event.payload?.$case === 'task'
      ? event.payload.value.status?.state
      : undefined;

export const textOf = (parts: Part[] | undefined) =>
  (parts ?? []).map((part) => (part.content?.$case === 'text' ? part.content.value : '')).join('');

/** The streamed model text with where each chunk starts. */
export const textChunksOf = (events: StreamResponse[]) =>
  events.flatMap((event) =>
    event.payload?.$case === 'artifactUpdate' && event.payload.value.artifact?.artifactId.startsWith('text-')
      ? [
          {
            artifactId: event.payload.value.artifact.artifactId,
            text: textOf(event.payload.value.artifact.parts),
            offset: Number(event.payload.value.artifact.metadata?.['durable-agent/offset']),
          },
        ]
      : [],
  );

/** The streamed model text, chunk by chunk. */
export const chunksOf = (events: StreamResponse[]) => textChunksOf(events).map((chunk) => chunk.text);

/** The cursor an event carries, if any. */
export const cursorOf = (event: StreamResponse): string | undefined =>
  (event.payload?.value as { metadata?: Record<string, string> } | undefined)?.metadata?.[A2A_CURSOR];
