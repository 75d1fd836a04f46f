/** Int64 fields (event ids, seconds) arrive as Long from the server and as numbers from a JSON history. */
export function int64(value: number | { toString(): string } | null | undefined): number {
  if (value === null || value === undefined) return 0;
  return typeof value === 'number' ? value : Number(value.toString());
}

/** An event's time in ms; works for both forms (where the SDK's `tsToMs` needs a Long). */
export function timestampMs(
  time: { seconds?: number | { toString(): string } | null; nanos?: number | null } | null | undefined,
): number | undefined {
  if (!time) return undefined;
  return int64(time.seconds) * 1_000 + Math.floor((time.nanos ?? 0) / 1_000_000);
}
