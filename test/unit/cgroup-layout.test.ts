import { cgroupLayoutOf } from '../../src/tools/exec/cgroup-layout';
import { type CgroupChoice, processLimitStatus } from '../../src/tools/exec/command-cgroups';

/** Mount lines as the kernel writes them, for the layouts commands meet. */
const HYBRID_MOUNTS = [
  '31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755',
  '32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu',
  '35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory',
  '39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids',
  '41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw',
].join('\n');

test('a hybrid layout: v2 at /sys/fs/cgroup/unified, v1 pids beside it, each at this process cgroup', () => {
  const layout = cgroupLayoutOf(
    HYBRID_MOUNTS,
    ['8:pids:/worker', '4:memory:/process_api/882a', '1:cpu:/', '0::/'].join('\n'),
  );
  expect(layout).toEqual({ v2: '/sys/fs/cgroup/unified', v1Pids: '/sys/fs/cgroup/pids/worker' });
});

test('pure v2 under systemd: the service cgroup', () => {
  const layout = cgroupLayoutOf(
    '30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate',
    '0::/system.slice/agent.service\n',
  );
  expect(layout).toEqual({ v2: '/sys/fs/cgroup/system.slice/agent.service' });
});

test('a bind-mounted subtree and escaped mount points are read right; paths outside the mount are not used', () => {
  const mounts = '50 23 0:26 /kubepods/pod1 /run/my\\040cgroup ro - cgroup2 cgroup2 rw';
  expect(cgroupLayoutOf(mounts, '0::/kubepods/pod1/ctr')).toEqual({ v2: '/run/my cgroup/ctr' });
  expect(cgroupLayoutOf(mounts, '0::/kubepods/pod2')).toEqual({});
  expect(cgroupLayoutOf(mounts, '0::/../../other')).toEqual({});
});

test('v1 pids mounted with other controllers is found; no cgroup fs at all gives an empty layout', () => {
  const mounts = '39 31 0:36 / /sys/fs/cgroup/cpu,pids rw - cgroup cgroup rw,cpu,pids';
  expect(cgroupLayoutOf(mounts, '3:cpu,pids:/a/b')).toEqual({ v1Pids: '/sys/fs/cgroup/cpu,pids/a/b' });
  expect(cgroupLayoutOf('22 1 8:1 / / rw - ext4 /dev/sda1 rw', '0::/')).toEqual({});
});

test('the status says plainly when the process limit does not bind', () => {
  const none: CgroupChoice = { unavailable: 'AGENT_EXEC_CGROUP=off' };
  expect(processLimitStatus(none, 0)).toMatchObject({ binds: false });
  expect(processLimitStatus(none, 0).text).toMatch(/does not apply to root/);
  expect(processLimitStatus(none, 0).text).toMatch(/env -i/);
  expect(processLimitStatus(none, 1000)).toMatchObject({ binds: true });
});
