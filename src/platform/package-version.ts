import { readFileSync } from 'node:fs';
import path from 'node:path';

/** This package's version, from its package.json. */
export function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
    version: string;
  };
  return manifest.version;
}
