import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const ROOT = path.resolve(__dirname, '../..');

/**
 * Runs examples/<name>/main.ts as a reader would (`node --import tsx`, from the repository root,
 * against the built package) with `env` added, and returns what it printed. Fails when it exits
 * other than 0, printing its stderr.
 */
export async function runExample(
  name: string,
  env: Record<string, string>,
  timeoutMs = 120_000,
): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', path.join(ROOT, 'examples', name, 'main.ts')],
      { cwd: ROOT, env: { ...process.env, ...env }, timeout: timeoutMs, killSignal: 'SIGKILL' },
    );
    return stdout;
  } catch (error) {
    const { stderr } = error as { stderr?: string };
    throw new Error(`example ${name} failed: ${(error as Error).message}\n${stderr ?? ''}`);
  }
}
