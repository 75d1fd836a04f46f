import { DEFAULT_SANDBOX_SETTINGS } from '../../src/tools/exec/bubblewrap';
import { DEFAULT_EXEC_LIMITS } from '../../src/tools/exec/exec-limits';
import { execLimitsFromEnv, sandboxFromEnv } from '../../src/worker/exec-settings';

test('the limits every command gets: defaults, overrides, and clear errors', () => {
  expect(execLimitsFromEnv({})).toEqual(DEFAULT_EXEC_LIMITS);
  expect(
    execLimitsFromEnv({
      AGENT_EXEC_CGROUP: '/sys/fs/cgroup/agents',
      AGENT_EXEC_PROCESSES: '512',
      AGENT_EXEC_DISK_MB: '0',
      AGENT_EXEC_DISK_RESERVE_MB: '2048',
    }),
  ).toEqual({
    cgroup: '/sys/fs/cgroup/agents',
    processes: 512,
    disk: { quotaMb: 0, reserveMb: 2048 },
  });
  expect(execLimitsFromEnv({ AGENT_EXEC_CGROUP: 'off' }).cgroup).toBe('off');
  expect(() => execLimitsFromEnv({ AGENT_EXEC_CGROUP: 'pids' })).toThrow(
    /AGENT_EXEC_CGROUP must be auto, off or the absolute path of a cgroup/,
  );
  expect(() => execLimitsFromEnv({ AGENT_EXEC_DISK_MB: '-1' })).toThrow(
    /AGENT_EXEC_DISK_MB must be a whole number ≥ 0/,
  );
  expect(() => execLimitsFromEnv({ AGENT_EXEC_PROCESSES: '0' })).toThrow(
    /AGENT_EXEC_PROCESSES must be a whole number ≥ 1/,
  );
});

test('the sandbox /tmp has a size, 512 MiB unless set', () => {
  expect(DEFAULT_SANDBOX_SETTINGS.tmpMb).toBe(512);
  expect(sandboxFromEnv({ AGENT_EXEC_SANDBOX_TMP_MB: '64' }).tmpMb).toBe(64);
  expect(() => sandboxFromEnv({ AGENT_EXEC_SANDBOX_TMP_MB: 'lots' })).toThrow(/AGENT_EXEC_SANDBOX_TMP_MB/);
});
