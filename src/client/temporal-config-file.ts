import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readSmallFile } from '../platform/small-file';

/** A client configuration file is a few profiles; anything this large is not one. */
const MAX_CONFIG_FILE_BYTES = 1024 * 1024;

export interface TemporalConfigFile {
  path: string;
  text: string;
}

/**
 * Temporal's client configuration file, found as the `temporal` CLI and the SDKs find it:
 * TEMPORAL_CONFIG_FILE when set (then it must exist: a mount that went missing must not quietly
 * become "no configuration"), else `temporal.toml` in the user's configuration directory
 * (`$XDG_CONFIG_HOME/temporalio`, `~/.config/temporalio` on Linux), which may be absent.
 */
export function findTemporalConfigFile(
  env: Record<string, string | undefined>,
  platform: NodeJS.Platform = os.platform(),
): TemporalConfigFile | undefined {
  const named = env.TEMPORAL_CONFIG_FILE;
  if (named) {
    if (!existsSync(named)) {
      throw new Error(
        `the Temporal client configuration file ${named} (TEMPORAL_CONFIG_FILE, --config-file) does not exist`,
      );
    }
    return read(named);
  }
  const fallback = defaultConfigFilePath(env, platform);
  return fallback && existsSync(fallback) ? read(fallback) : undefined;
}

function read(file: string): TemporalConfigFile {
  return {
    path: file,
    text: readSmallFile(file, MAX_CONFIG_FILE_BYTES, 'the Temporal client configuration file').toString(
      'utf8',
    ),
  };
}

/** Where Temporal's tools look for `temporal.toml` when TEMPORAL_CONFIG_FILE is unset. */
export function defaultConfigFilePath(
  env: Record<string, string | undefined>,
  platform: NodeJS.Platform,
): string | undefined {
  let dir: string | undefined;
  if (platform === 'win32') dir = env.APPDATA || undefined;
  else if (platform === 'darwin')
    dir = env.HOME ? path.join(env.HOME, 'Library', 'Application Support') : undefined;
  else {
    const xdg = env.XDG_CONFIG_HOME;
    if (xdg) dir = path.isAbsolute(xdg) ? xdg : undefined;
    else dir = env.HOME ? path.join(env.HOME, '.config') : undefined;
  }
  return dir === undefined ? undefined : path.join(dir, 'temporalio', 'temporal.toml');
}
