import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { sandboxAvailability } from '../../src/tools/exec/bubblewrap';
import { makeTempDir, removeDir } from './tool-harness';

jest.setTimeout(60_000);

// bubblewrap mounts a 64 KB tmpfs over the workspace for one process: a disk that really fills up.
const available = sandboxAvailability();

test('a full disk during write and edit: the model reads that no space is left, the file is as it was, no temporary file is left', async () => {
  if (!available.ok)
    throw new Error(`this test needs bubblewrap (apt-get install bubblewrap): ${available.reason}`);
  const root = await makeTempDir('durable-agent-full-disk-');
  try {
    const { stdout } = await promisify(execFile)('bwrap', [
      '--dev-bind',
      '/',
      '/',
      '--size',
      String(64 * 1024),
      '--tmpfs',
      root,
      '--die-with-parent',
      process.execPath,
      '--import',
      'tsx',
      path.join(__dirname, '..', 'support', 'file-tools-on-full-disk.ts'),
      root,
    ]);
    const noSpace = {
      ok: false,
      kind: 'ExecutionFailed',
      message: expect.stringMatching(
        /^no space left on the device for notes\.txt \(the disk or quota is full\): nothing was changed/,
      ),
    };
    expect(JSON.parse(stdout)).toEqual({
      write: noSpace,
      edit: noSpace,
      content: 'original\n',
      files: ['notes.txt'],
    });
  } finally {
    await removeDir(root);
  }
});
