import { Cleanups } from '../../src/cli/cleanups';

test('a second runAll while the steps run waits for all of them, each run once, in order', async () => {
  const cleanups = new Cleanups();
  const done: string[] = [];
  let releaseWorker!: () => void;
  cleanups.last(async () => {
    done.push('server');
  });
  cleanups.first(
    () =>
      new Promise<void>((resolve) => {
        releaseWorker = () => {
          done.push('worker');
          resolve();
        };
      }),
  );
  const fromSignal = cleanups.runAll();
  // The command's own ending calls it again while the worker is still stopping.
  let secondDone = false;
  const fromCommand = cleanups.runAll().then(() => (secondDone = true));
  await new Promise((resolve) => setTimeout(resolve, 20));
  expect(secondDone).toBe(false);
  releaseWorker();
  await Promise.all([fromSignal, fromCommand]);
  expect(done).toEqual(['worker', 'server']);
  await cleanups.runAll();
  expect(done).toEqual(['worker', 'server']);
});
