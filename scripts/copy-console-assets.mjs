// The console's script and stylesheet are served as they are written: the build puts them beside
// the compiled console, where the gateway reads them.
import { cp } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
await cp(path.join(root, 'src', 'console', 'assets'), path.join(root, 'dist', 'console', 'assets'), {
  recursive: true,
});
