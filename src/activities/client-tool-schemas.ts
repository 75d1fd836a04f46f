import type { ClientTool } from '../shared/client-tools';
import type { ModelProvider } from '../shared/model-provider';
import { toolParametersFor } from '../tools/provider-schema';
import type { ModelToolSchema } from '../tools/registry';

/**
 * The schemas of the tools a message's sender carries out itself, as `provider` accepts them, sorted
 * by name like the worker's. Their parameters come from outside: a schema that is no object is
 * offered as one without properties, and the model's arguments are the sender's to check.
 */
export function clientToolSchemas(tools: readonly ClientTool[], provider: ModelProvider): ModelToolSchema[] {
  return [...tools]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((tool) => ({
      type: 'function',
      function: {
        name: tool.name,
        description: tool.description,
        parameters: toolParametersFor(provider, tool.parameters),
      },
    }));
}
