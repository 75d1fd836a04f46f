import { type StatsFs, statSync, statfsSync } from 'node:fs';
import { statfs } from 'node:fs/promises';

const MIB = 1024 * 1024;
/** How often the free space is read while a command runs; what the disk takes in one interval is the overshoot. */
export const DISK_CHECK_MS = 100;
/** A command counts as writing when it took at least this much; below it, metadata and other noise. */
const WRITING_BYTES = MIB;

/** What a command may take of the disk (AGENT_EXEC_DISK_MB, AGENT_EXEC_DISK_RESERVE_MB). */
export interface DiskLimits {
  /** Free space a command may consume, MiB, measured on the file systems it writes to; 0: no limit. */
  quotaMb: number;
  /** Free space that must stay; a command still writing when there is less is stopped. 0: none. */
  reserveMb: number;
}

/** Why a watchdog stopped a command. */
export type DiskStop = { reason: 'quota'; quotaMb: number } | { reason: 'reserve'; reserveMb: number };

/** The first line of the result of a command the watchdog stopped. */
export function diskStopText(stop: DiskStop): string {
  return stop.reason === 'quota'
    ? `stopped: the command wrote more than ${stop.quotaMb} MB to disk, so all its processes were killed`
    : `stopped: free disk space fell under ${stop.reserveMb} MB while the command was writing, so all its processes were killed`;
}

type FreeBytes = (path: string) => Promise<number>;

interface Watch {
  baseline: number;
  limits: DiskLimits;
  onExceeded: (stop: DiskStop) => void;
}

interface FileSystem {
  /** A directory on it to ask. */
  path: string;
  watches: Set<Watch>;
  /** A read is under way; the next tick does not start another (a hung file system holds one pool thread, not all). */
  reading: boolean;
}

/**
 * Watches the free space of the file systems commands write to. A quota per directory needs
 * privileges a worker rarely has (project quotas, mounting), so this measures instead: the free
 * space when a command starts, then every `DISK_CHECK_MS`; a command that consumed more than its
 * quota, or is writing while free space is under the reserve, is reported once to `onExceeded`.
 * One read per file system per tick, however many commands run. What it measures is the file
 * system, not the command: space others take or free in the meantime counts too.
 */
export class DiskWatchdog {
  private readonly fileSystems = new Map<number, FileSystem>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly freeBytes: FreeBytes = readFreeBytes,
    private readonly freeBytesNow: (path: string) => number = readFreeBytesSync,
    private readonly deviceOf: (path: string) => number = (path) => statSync(path).dev,
    private readonly intervalMs = DISK_CHECK_MS,
  ) {}

  /**
   * Starts watching `paths` (directories; several on one file system count once) for one command.
   * The baseline is read now, before the command writes. Returns the function that stops watching.
   */
  watch(paths: readonly string[], limits: DiskLimits, onExceeded: (stop: DiskStop) => void): () => void {
    if (limits.quotaMb <= 0 && limits.reserveMb <= 0) return () => undefined;
    const added: Array<[FileSystem, Watch]> = [];
    const devices = new Set<number>();
    for (const path of paths) {
      let device: number;
      let baseline: number;
      try {
        device = this.deviceOf(path);
        if (devices.has(device)) continue;
        baseline = this.freeBytesNow(path);
      } catch {
        continue;
      }
      devices.add(device);
      let fileSystem = this.fileSystems.get(device);
      if (!fileSystem) {
        fileSystem = { path, watches: new Set(), reading: false };
        this.fileSystems.set(device, fileSystem);
      }
      let reported = false;
      const watch: Watch = {
        baseline,
        limits,
        onExceeded: (stop) => {
          if (reported) return;
          reported = true;
          onExceeded(stop);
        },
      };
      fileSystem.watches.add(watch);
      added.push([fileSystem, watch]);
    }
    if (added.length > 0) this.timer ??= setInterval(() => this.tick(), this.intervalMs).unref();
    return () => {
      for (const [fileSystem, watch] of added) fileSystem.watches.delete(watch);
      this.prune();
    };
  }

  /** Forgets file systems no command watches any more; the timer stops with the last. */
  private prune(): void {
    for (const [device, fileSystem] of this.fileSystems) {
      if (fileSystem.watches.size === 0 && !fileSystem.reading) this.fileSystems.delete(device);
    }
    if (this.fileSystems.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  private tick(): void {
    for (const fileSystem of this.fileSystems.values()) {
      if (fileSystem.reading || fileSystem.watches.size === 0) continue;
      fileSystem.reading = true;
      this.freeBytes(fileSystem.path).then(
        (free) => {
          fileSystem.reading = false;
          for (const watch of fileSystem.watches) check(watch, free);
          this.prune();
        },
        () => {
          fileSystem.reading = false;
          this.prune();
        },
      );
    }
  }
}

function check(watch: Watch, free: number): void {
  const consumed = watch.baseline - free;
  const { quotaMb, reserveMb } = watch.limits;
  if (quotaMb > 0 && consumed > quotaMb * MIB) watch.onExceeded({ reason: 'quota', quotaMb });
  else if (reserveMb > 0 && free < reserveMb * MIB && consumed >= WRITING_BYTES)
    watch.onExceeded({ reason: 'reserve', reserveMb });
}

/** Space an unprivileged writer can still take: what "free" means to a command and to `df`. */
const available = (stats: StatsFs) => stats.bavail * stats.bsize;

const readFreeBytes: FreeBytes = async (path) => available(await statfs(path));
const readFreeBytesSync = (path: string) => available(statfsSync(path));

/** The watchdog of this worker process, shared by every exec tool in it. */
export const diskWatchdog = new DiskWatchdog();
