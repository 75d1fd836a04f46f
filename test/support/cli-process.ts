import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

/** The built command line: `npm run build` first (npm test does). */
export const CLI = path.resolve(__dirname, '../../dist/cli/cli.js');

export function assertCliBuilt(): void {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` (npm test does it first)`);
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliProcess {
  /** Resolves when the process exits. */
  done: Promise<CliRun>;
  /** Resolves with the first match once stderr matches; rejects if the process exits first. */
  stderrMatching(pattern: RegExp): Promise<RegExpExecArray>;
  stdoutMatching(pattern: RegExp): Promise<RegExpExecArray>;
  kill(signal?: NodeJS.Signals): void;
}

/** The CLI in its own process with stdin not a terminal, as a script or another service runs it. */
export function startCli(args: string[], env: NodeJS.ProcessEnv, options: { cwd?: string } = {}): CliProcess {
  const child = spawn(process.execPath, [CLI, ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
  const output = { stdout: '', stderr: '' };
  const waiters: Array<() => void> = [];
  const notify = () => waiters.forEach((check) => check());
  // Decoded as a whole stream, so a character split between two chunks stays whole.
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    output.stdout += chunk;
    notify();
  });
  child.stderr.on('data', (chunk: string) => {
    output.stderr += chunk;
    notify();
  });
  let exited = false;
  const done = new Promise<CliRun>((resolve) =>
    child.on('close', (code) => {
      exited = true;
      notify();
      resolve({ code, ...output });
    }),
  );
  const matching = (stream: 'stdout' | 'stderr', pattern: RegExp) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const check = () => {
        const match = pattern.exec(output[stream]);
        if (match) resolve(match);
        else if (exited) {
          reject(
            new Error(
              `durable-agent ${args.join(' ')} exited without ${stream} matching ${pattern}\nstdout: ${output.stdout}\nstderr: ${output.stderr}`,
            ),
          );
        }
      };
      waiters.push(check);
      check();
    });
  return {
    done,
    stderrMatching: (pattern) => matching('stderr', pattern),
    stdoutMatching: (pattern) => matching('stdout', pattern),
    kill: (signal = 'SIGTERM') => child.kill(signal),
  };
}

export function runCli(
  args: string[],
  env: NodeJS.ProcessEnv,
  options: { cwd?: string } = {},
): Promise<CliRun> {
  return startCli(args, env, options).done;
}
