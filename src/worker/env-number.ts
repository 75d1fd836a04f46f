/** A whole-number setting from the environment: `fallback` when unset, an error naming it when malformed or below `min`. */
export function wholeNumberFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0): number {
  const text = env[name]?.trim();
  if (!text) return fallback;
  if (!/^\d+$/.test(text) || Number(text) < min) {
    throw new Error(`${name} must be a whole number${min ? ` ≥ ${min}` : ''}, not ${JSON.stringify(text)}`);
  }
  return Number(text);
}
