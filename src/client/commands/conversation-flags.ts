import path from 'node:path';
import type { ConversationOptionsInput } from '../../shared/conversation-options';
import { positiveInteger } from './parse-command-args';
import { UsageError } from './usage-error';

/** Flags that set a conversation's options; they count only when the message starts the conversation. */
export const CONVERSATION_OPTION_FLAGS = {
  workspace: { type: 'string' },
  model: { type: 'string' },
  system: { type: 'string' },
  'max-tool-iterations': { type: 'string' },
  approval: { type: 'string' },
} as const;

export interface ConversationOptionValues {
  workspace?: string;
  model?: string;
  system?: string;
  'max-tool-iterations'?: string;
  approval?: string;
}

export function conversationOptionsFromFlags(values: ConversationOptionValues): ConversationOptionsInput {
  const approval = values.approval;
  if (approval !== undefined && approval !== 'auto' && approval !== 'ask') {
    throw new UsageError(`--approval takes auto or ask, got ${approval}`);
  }
  return {
    ...(values.workspace !== undefined ? { workspace: path.resolve(values.workspace) } : {}),
    ...(values.model !== undefined ? { model: values.model } : {}),
    ...(values.system !== undefined ? { systemPrompt: values.system } : {}),
    ...(values['max-tool-iterations'] !== undefined
      ? { maxToolIterations: positiveInteger(values['max-tool-iterations'], '--max-tool-iterations') }
      : {}),
    ...(approval ? { approval: { mode: approval } } : {}),
  };
}
