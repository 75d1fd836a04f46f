import type { ToolResultContent } from '../shared/content';
import type { ToolResult, ToolUpdate } from '../tools/tool';
import { ToolError } from '../tools/tool-error';

/** A `tools/call` result as the MCP SDK returns it (only the fields read here). */
export interface McpCallResult {
  content?: Array<Record<string, unknown>>;
  structuredContent?: unknown;
  isError?: boolean;
}

/**
 * An MCP tool result as a tool result: text and images as they are, anything else (audio,
 * resources, links) described in text. `isError` results become a ToolError, so the model reads
 * them as the tool's error at once: the server answered, so asking it again would only repeat the
 * call (and any side effect).
 */
export function toolResultOfMcp(result: McpCallResult): ToolResult {
  const content = (result.content ?? []).map(contentOf);
  if (content.length === 0 && result.structuredContent !== undefined) {
    content.push({ type: 'text', text: JSON.stringify(result.structuredContent, null, 2) });
  }
  if (result.isError) {
    const text = content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n');
    throw new ToolError('ExecutionFailed', text || 'the MCP tool reported an error', {
      retryable: false,
    });
  }
  return {
    content,
    ...(result.structuredContent !== undefined
      ? { details: { structuredContent: result.structuredContent } }
      : {}),
  };
}

/** An MCP progress notification as a tool update, which the tool activity heartbeats. */
export function updateOfProgress(progress: {
  progress: number;
  total?: number;
  message?: string;
}): ToolUpdate {
  const total = progress.total !== undefined ? `/${progress.total}` : '';
  const message = progress.message ? `: ${progress.message}` : '';
  return {
    content: [{ type: 'text', text: `progress ${progress.progress}${total}${message}` }],
    details: {
      progress: progress.progress,
      ...(progress.total !== undefined ? { total: progress.total } : {}),
    },
  };
}

function contentOf(block: Record<string, unknown>): ToolResultContent {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: String(block.text ?? '') };
    case 'image':
      return {
        type: 'image',
        data: String(block.data ?? ''),
        mimeType: String(block.mimeType ?? 'image/png'),
      };
    case 'resource': {
      const resource = (block.resource ?? {}) as Record<string, unknown>;
      if (typeof resource.text === 'string') return { type: 'text', text: resource.text };
      return {
        type: 'text',
        text: `[resource ${String(resource.uri)} (${String(resource.mimeType ?? 'binary')})]`,
      };
    }
    case 'resource_link':
      return {
        type: 'text',
        text: `[resource link ${String(block.uri)}${block.name ? ` (${String(block.name)})` : ''}]`,
      };
    default:
      return {
        type: 'text',
        text: `[${String(block.type)} content${block.mimeType ? ` (${String(block.mimeType)})` : ''}]`,
      };
  }
}
