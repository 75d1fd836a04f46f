import OpenAI from 'openai';
import { assembleStream } from '../../src/activities/models/openai/chat-stream';
import { toOpenAiMessages } from '../../src/activities/models/openai/chat-messages';
import type { AssistantMessage, Message, ToolCall, ToolResultMessage } from '../../src/shared/messages';
import { ToolRegistry } from '../../src/tools/registry';
import { runsOnWorker } from '../../src/tools/tool';
import { Workspace } from '../../src/tools/workspace';
import { benchTools } from './bench-tools';
import { scratchDir } from './scratch';

export interface LoopSteps {
  /** One streamed model call with the whole transcript and every bench tool offered. */
  callModel(transcript: Message[]): Promise<AssistantMessage>;
  /** One tool call, run to its result. */
  runTool(call: ToolCall): Promise<ToolResultMessage>;
}

/**
 * The two steps of a turn loop without durable-agent around them, made the way its callModel and
 * runTool activities make them: the same OpenAI client, stream assembly, message conversion and
 * tool implementations. The floor runs them in-process; the bare Temporal loop as activities.
 */
export function loopSteps(modelBaseUrl: string): LoopSteps {
  const openai = new OpenAI({ baseURL: modelBaseUrl, apiKey: 'bench', maxRetries: 0 });
  const tools = new ToolRegistry(benchTools());
  const workspace = new Workspace(scratchDir('workspace-'));
  return {
    async callModel(transcript) {
      const stream = await openai.chat.completions.create({
        model: 'bench-model',
        messages: toOpenAiMessages(transcript),
        tools: tools.modelSchemas(tools.names()),
        stream: true,
        stream_options: { include_usage: true },
      });
      return assembleStream(stream, () => undefined, Date.now);
    },
    async runTool(call) {
      const tool = tools.get(call.name);
      if (!tool || !runsOnWorker(tool)) throw new Error(`unknown tool ${call.name}`);
      const params = tool.parameters.parse(JSON.parse(call.arguments || '{}')) as Record<string, unknown>;
      const result = await tool.execute(call.id, params, new AbortController().signal, () => undefined, {
        workspace,
        conversationId: 'bench',
        agentId: 'default',
      });
      return {
        role: 'toolResult',
        toolCallId: call.id,
        toolName: call.name,
        content: result.content,
        isError: false,
        timestamp: Date.now(),
      };
    },
  };
}
