import { type ParseArgsConfig, parseArgs } from 'node:util';
import { msToNumber } from '@temporalio/common/lib/time';
import { assertConversationId } from '../shared/ids';
import { UsageError } from './usage-error';

/** node:util parseArgs, with its complaints (unknown option, missing value) as usage errors. */
export function parseCommandArgs<T extends ParseArgsConfig>(
  command: string,
  config: T,
): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (error) {
    if ((error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      throw new UsageError(`${command}: ${(error as Error).message.split('\n')[0]}`);
    }
    throw error;
  }
}

/** The positional arguments a command takes, by name, or a usage error saying what is missing or extra. */
export function namedPositionals<const Names extends readonly string[]>(
  command: string,
  positionals: string[],
  names: Names,
): Record<Names[number], string> {
  if (positionals.length < names.length) {
    const missing = names.slice(positionals.length).join(' and ');
    throw new UsageError(`${command} needs ${missing}`);
  }
  if (positionals.length > names.length) {
    if (names.length === 0)
      throw new UsageError(`${command} takes no arguments; unexpected ${JSON.stringify(positionals[0])}`);
    throw new UsageError(
      `${command} takes ${names.join(' and ')}; unexpected ${JSON.stringify(positionals[names.length])}`,
    );
  }
  return Object.fromEntries(names.map((name, index) => [name, positionals[index]!])) as Record<
    Names[number],
    string
  >;
}

/** A whole number of at least 1 given as a flag value. */
export function positiveInteger(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) {
    throw new UsageError(`${flag} takes a whole number of at least 1, got ${value}`);
  }
  return number;
}

/** A positive amount of US dollars (`0.5`, `$2`), for the flags that budget cost. */
export function dollarAmount(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const amount = Number(value.trim().replace(/^\$/, ''));
  if (!Number.isFinite(amount) || amount <= 0 || value.trim() === '') {
    throw new UsageError(`${flag} takes an amount of US dollars above 0, such as 0.50, got ${value}`);
  }
  return amount;
}

/** A duration given as a flag value (`90s`, `30m`, `2h`, `2d`), in whole milliseconds of at least 1. */
export function durationArg(value: string, flag: string): number {
  let ms: number;
  try {
    ms = msToNumber(value as Parameters<typeof msToNumber>[0]);
  } catch {
    ms = Number.NaN;
  }
  if (!Number.isInteger(ms) || ms < 1)
    throw new UsageError(`${flag} takes a duration such as 90s, 30m, 12h or 2d, got ${value}`);
  return ms;
}

/** A conversation id typed on the command line; a malformed one is a usage error. */
export function conversationIdArg(id: string): string {
  try {
    return assertConversationId(id);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}
