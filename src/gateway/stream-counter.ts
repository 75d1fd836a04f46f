import type { GatewayToken } from './gateway-api';
import { TooManyRequests } from './gateway-errors';

/**
 * Counts the event streams each token has open: opening one past `maxStreams` is 429, and opening
 * returns the stream's close.
 */
export function streamCounter(maxStreams: number): (token: GatewayToken) => () => void {
  /** Event streams open, by token. */
  const streams = new Map<GatewayToken, number>();
  return (token) => {
    // Counted and taken with no await between, so streams opened together cannot pass the cap together.
    const open = streams.get(token) ?? 0;
    if (open >= maxStreams) {
      throw new TooManyRequests(
        `the token ${token.name} has ${open} event streams open, the most it may have: close one first`,
      );
    }
    streams.set(token, open + 1);
    return () => {
      const left = (streams.get(token) ?? 1) - 1;
      if (left > 0) streams.set(token, left);
      else streams.delete(token);
    };
  };
}
