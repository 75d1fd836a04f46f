/**
 * A workflow that uses every zod schema the bundle's modules export, from inside a workflow, after
 * Temporal has frozen the modules the worker thread shares: what a conversation could do with any of
 * them. Bundled with durable-agent's workflows, so the graph it walks is theirs.
 */
import { z } from 'zod';
import { AgentIdSchema } from '../../src/shared/agent-id';
import { exportedSchemas } from '../../src/workflows/shared-module-graph';

export * from '../../src/workflows';

export interface ModuleGraphProbe {
  schemas: number;
  frozen: number;
  /** Each use a frozen schema refused, as "schema #index: use: message". */
  refusals: string[];
  /** What a shared schema with a pattern (the agent id's) decided, for a valid id and a path. */
  agentIds: { valid: boolean; path: boolean };
}

const FROZEN_WRITE = /not extensible|read.only|Cannot (define|assign|add|redefine)/;

export async function moduleGraphProbe(): Promise<ModuleGraphProbe> {
  const schemas = exportedSchemas();
  const refusals: string[] = [];
  const uses: Record<string, (schema: z.ZodType) => unknown> = {
    safeParse: (schema) => [schema.safeParse(undefined), schema.safeParse({}), schema.safeParse('text')],
    parse: (schema) => schema.parse({}),
    standard: (schema) => schema['~standard'].validate({}),
    compose: (schema) => [schema.optional(), schema.nullable(), schema.array(), schema.or(z.string())],
    jsonSchema: (schema) => z.toJSONSchema(schema, { unrepresentable: 'any' }),
    members: (schema) =>
      Object.keys(schema).map((key) => (schema as unknown as Record<string, unknown>)[key]),
  };
  schemas.forEach((schema, index) => {
    for (const [use, run] of Object.entries(uses)) {
      try {
        run(schema);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        if (error instanceof TypeError && FROZEN_WRITE.test(message)) {
          refusals.push(`schema #${index}: ${use}: ${message}`);
        }
      }
    }
  });
  return {
    schemas: schemas.length,
    frozen: schemas.filter((schema) => Object.isFrozen(schema)).length,
    refusals,
    agentIds: {
      valid: AgentIdSchema.safeParse('ops-team_1').success,
      path: AgentIdSchema.safeParse('../etc').success,
    },
  };
}
