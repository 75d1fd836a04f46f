import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

// The API reference (`npm run docs:api`) is built from the exported names' doc comments; typedoc.json
// makes a name without one, or a type a user meets that is not exported, a validation error. This
// builds it into a scratch directory so that `npm test` fails on an undocumented export.
const root = path.resolve(__dirname, '../..');

test('the API reference builds with every exported name documented', () => {
  const out = mkdtempSync(path.join(tmpdir(), 'api-reference-'));
  try {
    const run = spawnSync(
      process.execPath,
      [path.join(root, 'node_modules/typedoc/bin/typedoc'), '--out', out],
      { cwd: root, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } },
    );
    const output = `${run.stdout}${run.stderr}`;
    const warnings = output.split('\n').filter((line) => /\[(warning|error)\]/.test(line));
    expect(warnings).toEqual([]);
    expect(run.status).toBe(0);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}, 120_000);
