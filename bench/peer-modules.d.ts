/**
 * The peer (bench/ai-sdk-peer) has its own package and dependencies, installed by the first
 * `npm run bench`; the root project type-checks bench/ with or without them. To the root project
 * these modules are the small typed facade below (ambient declarations win over node_modules), and
 * `npx tsc -p bench/ai-sdk-peer` checks the peer against the real types of its pinned versions.
 */

declare module '@temporalio/ai-sdk/workflow' {
  export const temporalProvider: { languageModel(modelId: string): unknown };
}

declare module '@temporalio/ai-sdk' {
  export class AiSdkPlugin {
    constructor(options: { modelProvider: unknown });
    readonly name: string;
  }
}

declare module '@ai-sdk/openai-compatible' {
  export function createOpenAICompatible(options: {
    name: string;
    baseURL: string;
    apiKey?: string;
  }): unknown;
}

declare module 'headers-polyfill' {
  export const Headers: unknown;
}

declare module 'ai' {
  export type ModelMessage =
    { role: 'user'; content: string } | { role: 'assistant' | 'tool'; content: unknown };
  export interface Schema<T> {
    readonly jsonSchema: unknown;
    readonly _type?: T;
  }
  export interface Tool {
    description?: string;
  }
  export function jsonSchema<T>(schema: Record<string, unknown>): Schema<T>;
  export function tool<INPUT, OUTPUT>(definition: {
    description: string;
    inputSchema: Schema<INPUT>;
    execute: (input: INPUT) => Promise<OUTPUT>;
  }): Tool;
  export function stepCountIs(count: number): unknown;
  export function generateText(options: {
    model: unknown;
    messages: ModelMessage[];
    tools?: Record<string, Tool>;
    stopWhen?: unknown;
  }): Promise<{ text: string; response: { messages: ModelMessage[] } }>;
}
