import {
  EVERY_TEST_SERVER,
  type Preparation,
  type TestServer,
  prepareTestServers,
} from '../support/test-servers';

/** A preparation that records when it runs, and builds (says a line) unless `found`. */
function fake(
  name: string,
  go: boolean,
  journal: string[],
  options: { found?: boolean; fails?: boolean; cli?: string; turns?: number } = {},
): Preparation {
  return {
    name,
    usedBy: 'a test',
    go,
    async prepare(progress, _note, prepared) {
      journal.push(`start ${name}`);
      if (!options.found) progress(`Building ${name}`);
      // Turns of the event loop, so that whatever could run beside this does.
      for (let turn = 0; turn < (options.turns ?? 1); turn++)
        await new Promise((resolve) => setImmediate(resolve));
      journal.push(`end ${name}`);
      if (options.cli) prepared.temporalCli = options.cli;
      if (options.fails) throw new Error(`${name} did not build`);
    },
  };
}

function fakes(journal: string[], options: Partial<Record<TestServer, Parameters<typeof fake>[3]>> = {}) {
  const go = (name: TestServer) =>
    name !== 'time-skipping-server' && name !== 'kubernetes-validate' && name !== 'a2a-python-sdk';
  return Object.fromEntries(
    EVERY_TEST_SERVER.map((name) => [name, fake(name, go(name), journal, options[name])]),
  ) as Record<TestServer, Preparation>;
}

test('the Go builds run one after another, and the Maven fetch and the pip install beside them', async () => {
  const journal: string[] = [];
  const prepared = await prepareTestServers(
    EVERY_TEST_SERVER,
    () => undefined,
    fakes(journal, { 'temporal-cli': { cli: '/tools/temporal' } }),
  );
  expect(prepared).toEqual({ temporalCli: '/tools/temporal' });
  const goJournal = journal.filter(
    (entry) =>
      !entry.endsWith('time-skipping-server') &&
      !entry.endsWith('kubernetes-validate') &&
      !entry.endsWith('a2a-python-sdk'),
  );
  expect(goJournal).toEqual(
    ['temporal-server', 'temporal-cli', 'temporal-ui-server', 'versitygw', 'helm'].flatMap((name) => [
      `start ${name}`,
      `end ${name}`,
    ]),
  );
  // The fetch and the install started before the first Go build ended.
  expect(journal.indexOf('start time-skipping-server')).toBeLessThan(journal.indexOf('end temporal-server'));
  expect(journal.indexOf('start kubernetes-validate')).toBeLessThan(journal.indexOf('end temporal-server'));
});

test('what is built is said with why it takes a while, and nothing is said when everything is found', async () => {
  const lines: string[] = [];
  const allFound = Object.fromEntries(EVERY_TEST_SERVER.map((name) => [name, { found: true }]));
  await prepareTestServers(EVERY_TEST_SERVER, (line) => lines.push(line), fakes([], allFound));
  expect(lines).toEqual([]);

  await prepareTestServers(
    EVERY_TEST_SERVER,
    (line) => lines.push(line),
    fakes([], { ...allFound, 'temporal-ui-server': { found: false }, versitygw: { found: false } }),
  );
  expect(lines).toEqual([
    expect.stringMatching(
      /before any test starts.*Go module proxy \(many minutes each without a warm Go cache\)/,
    ),
    '[test servers] temporal-ui-server (a test):',
    '[test servers]   Building temporal-ui-server',
    expect.stringMatching(/^\[test servers\] {3}temporal-ui-server ready after \d+ s$/),
    '[test servers] versitygw (a test):',
    '[test servers]   Building versitygw',
    expect.stringMatching(/^\[test servers\] {3}versitygw ready after \d+ s$/),
  ]);
});

test('a build that fails fails the preparation once the others have settled, and stops the Go builds after it', async () => {
  const journal: string[] = [];
  await expect(
    prepareTestServers(
      EVERY_TEST_SERVER,
      () => undefined,
      // The fetch is still running when the Temporal CLI's build fails.
      fakes(journal, { 'temporal-cli': { fails: true }, 'time-skipping-server': { turns: 10 } }),
    ),
  ).rejects.toThrow('temporal-cli did not build');
  expect(journal).toContain('end time-skipping-server');
  expect(journal).not.toContain('start temporal-ui-server');
});
