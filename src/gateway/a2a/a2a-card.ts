import { A2A_PROTOCOL_VERSION, type A2ACardSettings } from '../../shared/a2a';

/** Where the JSON-RPC binding is served, under the gateway's origin. */
export const A2A_RPC_PATH = '/a2a';

/** The card the gateway shows when its operator described no agent. */
export const DEFAULT_A2A_CARD: A2ACardSettings = {
  name: 'durable-agent',
  description:
    'A durable AI agent: each context is a conversation that survives crashes and restarts; tool calls that need a decision wait for one (input-required).',
  skills: [],
};

/**
 * The agent card (A2A 1.0, ProtoJSON): the operator's name, description and skills; the JSON-RPC
 * interface at `origin`; the capabilities this gateway has (streaming, push notifications, no
 * extended card); and the gateway's bearer tokens as the one security scheme every call needs.
 */
export function agentCard(settings: A2ACardSettings, origin: string): Record<string, unknown> {
  const skills = settings.skills.length
    ? settings.skills
    : [{ id: 'conversation', name: 'Conversation', description: settings.description, tags: ['general'] }];
  return {
    name: settings.name,
    description: settings.description,
    version: settings.version ?? '1.0.0',
    supportedInterfaces: [
      { url: `${origin}${A2A_RPC_PATH}`, protocolBinding: 'JSONRPC', protocolVersion: A2A_PROTOCOL_VERSION },
    ],
    ...(settings.provider ? { provider: settings.provider } : {}),
    ...(settings.documentationUrl ? { documentationUrl: settings.documentationUrl } : {}),
    capabilities: { streaming: true, pushNotifications: true, extendedAgentCard: false },
    securitySchemes: {
      gatewayToken: {
        httpAuthSecurityScheme: {
          scheme: 'Bearer',
          description:
            "A token of the gateway's token file: its actions, agents and conversation prefixes bound what the caller reaches.",
        },
      },
    },
    securityRequirements: [{ schemes: { gatewayToken: { list: [] } } }],
    defaultInputModes: ['text/plain', 'application/json'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills,
  };
}
