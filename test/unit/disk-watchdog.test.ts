import { childEnvironment } from '../../src/tools/exec/child-environment';
import { commandCgroupsFor } from '../../src/tools/exec/command-cgroups';
import { DiskWatchdog, type DiskStop, diskStopText } from '../../src/tools/exec/disk-watchdog';
import { spawnShell } from '../../src/tools/exec/shell-process';

const MIB = 1024 * 1024;

/** A disk whose free space the test sets, on one device per path prefix. */
function fakeDisk(initialFreeMb: number) {
  const disk = { freeMb: initialFreeMb, reads: 0 };
  const watchdog = new DiskWatchdog(
    async () => {
      disk.reads++;
      return disk.freeMb * MIB;
    },
    () => disk.freeMb * MIB,
    (dir) => (dir.startsWith('/other') ? 2 : 1),
    5,
  );
  return { disk, watchdog };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 30));

test('a command that consumes more than its quota is reported once', async () => {
  const { disk, watchdog } = fakeDisk(10_000);
  const stops: DiskStop[] = [];
  const stop = watchdog.watch(['/ws'], { quotaMb: 64, reserveMb: 0 }, (found) => stops.push(found));
  disk.freeMb -= 60;
  await tick();
  expect(stops).toEqual([]);
  disk.freeMb -= 10;
  await tick();
  await tick();
  expect(stops).toEqual([{ reason: 'quota', quotaMb: 64 }]);
  stop();
  expect(diskStopText(stops[0]!)).toBe(
    'stopped: the command wrote more than 64 MB to disk, so all its processes were killed',
  );
});

test('under the reserve, a command that is writing is stopped, one that is not is left alone', async () => {
  const { disk, watchdog } = fakeDisk(600);
  const writer: DiskStop[] = [];
  const idle: DiskStop[] = [];
  const stopWriter = watchdog.watch(['/ws'], { quotaMb: 0, reserveMb: 512 }, (found) => writer.push(found));
  disk.freeMb = 500;
  const stopIdle = watchdog.watch(['/ws'], { quotaMb: 0, reserveMb: 512 }, (found) => idle.push(found));
  await tick();
  expect(writer).toEqual([{ reason: 'reserve', reserveMb: 512 }]);
  expect(idle).toEqual([]);
  stopWriter();
  stopIdle();
});

test('one read per file system per tick, however many commands watch it; none once they stop', async () => {
  const { disk, watchdog } = fakeDisk(10_000);
  const stops = Array.from({ length: 10 }, () =>
    watchdog.watch(['/ws', '/ws/tmp', '/other'], { quotaMb: 64, reserveMb: 0 }, () => undefined),
  );
  await tick();
  const reads = disk.reads;
  // Two file systems: at most two reads per tick of 5 ms over 30 ms, with some slack for timers.
  expect(reads).toBeGreaterThan(0);
  expect(reads).toBeLessThanOrEqual(2 * 10);
  for (const stop of stops) stop();
  await tick();
  const after = disk.reads;
  await tick();
  expect(disk.reads).toBe(after);
});

test('no limits: nothing is watched', async () => {
  const { disk, watchdog } = fakeDisk(10_000);
  const stop = watchdog.watch(['/ws'], { quotaMb: 0, reserveMb: 0 }, () => undefined);
  await tick();
  expect(disk.reads).toBe(0);
  stop();
});

test('a run the watchdog stops is killed with everything it started, and says why', async () => {
  const { disk, watchdog } = fakeDisk(10_000);
  const { cgroups } = commandCgroupsFor('auto');
  const run = spawnShell('sleep 30 & sleep 30; echo never', {
    cwd: '/tmp',
    stdin: 'ignore',
    env: childEnvironment(process.env),
    limits: { processes: 64, disk: { quotaMb: 64, reserveMb: 0 }, watchdog, ...(cgroups ? { cgroups } : {}) },
  });
  let output = '';
  run.child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await tick();
  disk.freeMb -= 100;
  const exit = await run.ended;
  expect(exit).toEqual({ code: null, signal: 'SIGKILL' });
  expect(run.diskStop).toEqual({ reason: 'quota', quotaMb: 64 });
  expect(output).toBe('');
  if (run.cgroup) expect(await run.cgroup.members()).toEqual([]);
});
