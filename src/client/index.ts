export { AgentClient, type FollowItem, type SendOptions, type Sent } from './agent-client';
export type { ConversationState } from '../shared/conversation-api';
export type { ConversationOptionsInput } from '../shared/conversation-options';
export type { AgentEvent } from '../shared/events';
export type { Message } from '../shared/messages';
