import OpenAI from 'openai';
import type { WireFailure } from '../model-wire';

/** An error of OpenAI's client (Chat Completions and the Responses API alike), in the terms every wire shares. */
export function openAiFailureOf(error: unknown): WireFailure | undefined {
  // A connection error is an APIError without a status: tell it apart first.
  if (error instanceof OpenAI.APIConnectionError) return { kind: 'unreachable', message: error.message };
  if (!(error instanceof OpenAI.APIError) || typeof error.status !== 'number') return undefined;
  return {
    kind: 'status',
    status: error.status,
    message: error.message,
    ...(error.headers ? { headers: error.headers } : {}),
  };
}
