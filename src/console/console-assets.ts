import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';

/** A file the console serves as it is, named by its content's hash so a browser may keep it. */
export interface ConsoleAsset {
  path: string;
  contentType: string;
  body: string;
}

/** The console's script and stylesheet, read once from beside this module (the build copies them). */
export function loadConsoleAssets(): { script: ConsoleAsset; style: ConsoleAsset } {
  return {
    script: asset('console.js', 'text/javascript; charset=utf-8'),
    style: asset('console.css', 'text/css; charset=utf-8'),
  };
}

function asset(file: string, contentType: string): ConsoleAsset {
  const body = readFileSync(path.join(__dirname, 'assets', file), 'utf8');
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
  const [name, extension] = file.split('.');
  return { path: `/console/assets/${name}-${hash}.${extension}`, contentType, body };
}
