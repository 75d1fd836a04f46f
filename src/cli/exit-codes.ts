import { InvalidInputError } from '../shared/conversation-errors';
import { UsageError } from './usage-error';

/**
 * What a command that threw exits with, by the error's class (docs/commands.md): 2 with the usage
 * for bad arguments (wrong words, or input the client library refuses: InvalidInputError); 1 with
 * a one-line reason for everything else, a conversation that does not exist, has ended, exists
 * already or refused an update among them.
 */
export function exitOf(error: unknown): { code: 1 | 2; usage: boolean } {
  if (error instanceof UsageError || error instanceof InvalidInputError) return { code: 2, usage: true };
  return { code: 1, usage: false };
}
