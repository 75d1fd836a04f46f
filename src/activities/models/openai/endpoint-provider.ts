/**
 * Who serves an OpenAI-compatible endpoint, by its host, as OpenTelemetry's GenAI conventions name
 * providers (`gen_ai.provider.name`): the providers they list whose hosts are known. The first rule
 * a host matches wins: its exact name, or a name ending in `.suffix`.
 */
const KNOWN_HOSTS: ReadonlyArray<readonly [RegExp, string]> = [
  [/^api\.openai\.com$/, 'openai'],
  [/\.openai\.azure\.com$/, 'azure.ai.openai'],
  [
    /(^models\.inference\.ai\.azure\.com|\.services\.ai\.azure\.com|\.models\.ai\.azure\.com)$/,
    'azure.ai.inference',
  ],
  [/^generativelanguage\.googleapis\.com$/, 'gcp.gemini'],
  [/(^|\.)aiplatform\.googleapis\.com$/, 'gcp.vertex_ai'],
  [/^api\.anthropic\.com$/, 'anthropic'],
  [/^api\.mistral\.ai$/, 'mistral_ai'],
  [/^api\.deepseek\.com$/, 'deepseek'],
  [/^api\.groq\.com$/, 'groq'],
  [/^api\.x\.ai$/, 'x_ai'],
  [/^api\.perplexity\.ai$/, 'perplexity'],
  [/^api\.cohere\.(ai|com)$/, 'cohere'],
  [/^bedrock-[a-z-]+\.[a-z0-9-]+\.amazonaws\.com$/, 'aws.bedrock'],
  [/\.ml\.cloud\.ibm\.com$/, 'ibm.watsonx.ai'],
];

/**
 * The provider behind an OpenAI-compatible base URL; `_OTHER` for a host none of them has (a local
 * server, a proxy, a host the conventions do not name), whatever model it serves.
 */
export function endpointProviderName(baseURL: string): string {
  let host: string;
  try {
    host = new URL(baseURL).hostname.toLowerCase();
  } catch {
    return '_OTHER';
  }
  return KNOWN_HOSTS.find(([pattern]) => pattern.test(host))?.[1] ?? '_OTHER';
}
