import path from 'node:path';
import { ToolProfileSchema } from '../shared/tool-catalog';
import { UsageError } from './usage-error';

/** Commands whose conversation flags once had `--profile` name the tool profile (now `--tool-profile`). */
const TOOL_PROFILE_COMMANDS = new Set(['run', 'send', 'schedule']);

export interface ConnectionFlags {
  /** The command's own arguments, without the connection flags. */
  args: string[];
  /** `--profile NAME`: the profile of Temporal's client configuration file (TEMPORAL_PROFILE). */
  profile?: string;
  /** `--config-file PATH`: that file (TEMPORAL_CONFIG_FILE), as an absolute path. */
  configFile?: string;
  /** A deprecated use to warn about. */
  warning?: string;
}

/**
 * Takes `--profile NAME` and `--config-file PATH` (or `--flag=value`) out of any command's
 * arguments, before `--`, as the `temporal` CLI takes them. On `run`, `send` and `schedule`,
 * `--profile` followed by a tool profile's name (minimal, coding, messaging, full) keeps its old
 * meaning, the conversation's tool profile, with a warning to use `--tool-profile`.
 */
export function takeConnectionFlags(command: string, args: readonly string[]): ConnectionFlags {
  const rest: string[] = [];
  const found: Omit<ConnectionFlags, 'args'> = {};
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]!;
    if (arg === '--') {
      rest.push(...args.slice(index));
      break;
    }
    const match = /^--(profile|config-file)(?:=(.*))?$/.exec(arg);
    if (!match) {
      rest.push(arg);
      continue;
    }
    const flag = match[1] as 'profile' | 'config-file';
    const inline = match[2] !== undefined;
    const value = inline ? match[2]! : args[index + 1];
    if (value === undefined || value === '' || (!inline && value.startsWith('-'))) {
      throw new UsageError(`${command}: --${flag} needs a value`);
    }
    if (!inline) index++;
    if (
      flag === 'profile' &&
      TOOL_PROFILE_COMMANDS.has(command) &&
      ToolProfileSchema.safeParse(value).success
    ) {
      rest.push('--profile', value);
      found.warning = `--profile ${value} for the tool profile is deprecated: use --tool-profile ${value} (--profile names a Temporal client profile)`;
      continue;
    }
    if (flag === 'profile') found.profile = value;
    else found.configFile = path.resolve(value);
  }
  return { args: rest, ...found };
}
