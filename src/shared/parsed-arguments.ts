/** The arguments as an object, or empty when they are not JSON (a cut preview, or the model's mistake). */
export function parsedArguments(args: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(args);
    return value && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}
