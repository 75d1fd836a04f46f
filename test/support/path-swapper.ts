import { createInterface } from 'node:readline';
import { DEFAULT_SANDBOX_SETTINGS } from '../../src/tools/exec/bubblewrap';
import { spawnShell } from '../../src/tools/exec/shell-process';

/**
 * The hostile command of the file-tool race: in a loop, it moves `swapped` aside, puts a symbolic
 * link to `linkTarget` in its place, then puts it back, as fast as it can. Perl, because it is on
 * every Debian system and inside the sandbox (which binds only the system's directories).
 */
export const SWAPPER = String.raw`
my ($swapped, $aside, $target) = @ARGV;
$| = 1;
my ($swaps, $trash) = (0, 0);
# Each state lasts a moment (up to a few hundred microseconds), so calls meet all of them.
sub pause { select(undef, undef, undef, rand($_[0])); }
while (1) {
  if (rename($swapped, $aside)) {
    if (symlink($target, $swapped)) { pause(0.0002); unlink($swapped); }
    rename($aside, $swapped);
    $swaps++;
    print "$swaps
" if $swaps % 25 == 0;
    pause(0.0004);
  } elsif (-e $aside) {
    # A tool made the path anew while it was aside (a write makes missing directories): set that aside too.
    unlink($swapped) if -l $swapped;
    rename($swapped, $swapped . '.made-' . $trash++) if -e $swapped;
    rename($aside, $swapped);
  }
}`;

export interface Swapper {
  /** Complete swaps so far (counted in steps of 25). */
  swaps(): number;
  stop(): Promise<void>;
}

/** Starts the swapping command in the workspace, inside bubblewrap when `sandboxed` (as `exec` runs it). */
export function startSwapper(options: {
  workspace: string;
  swapped: string;
  aside: string;
  linkTarget: string;
  sandboxed: boolean;
}): Swapper {
  const run = spawnShell(swapperCommand(options.swapped, options.aside, options.linkTarget), {
    cwd: options.workspace,
    stdin: 'ignore',
    env: { PATH: '/usr/bin:/bin' },
    ...(options.sandboxed ? { sandbox: DEFAULT_SANDBOX_SETTINGS } : {}),
  });
  let swaps = 0;
  createInterface({ input: run.child.stdout! }).on('line', (line) => {
    swaps = Math.max(swaps, Number(line) || 0);
  });
  return {
    swaps: () => swaps,
    stop: async () => {
      run.terminate();
      await run.ended.catch(() => undefined);
    },
  };
}

/** The swapping command as one shell command line, for `spawnShell` or a model's `exec` call. */
export function swapperCommand(swapped: string, aside: string, linkTarget: string): string {
  const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
  return ['perl', '-e', SWAPPER, swapped, aside, linkTarget].map(quote).join(' ');
}
