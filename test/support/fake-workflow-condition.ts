/**
 * `condition` of `@temporalio/workflow` for unit tests of workflow classes run outside a worker
 * (`jest.mock('@temporalio/workflow', () => jest.requireActual('../support/fake-workflow-condition'))`).
 * A waiter whose check holds is woken by `settle()`, as the workflow's next activation would wake it;
 * its timeout runs on the test's timers (fake ones skip hours at once).
 */
interface Waiter {
  check: () => boolean;
  wake: (inTime: boolean) => void;
}

const waiters = new Set<Waiter>();

export function condition(check: () => boolean, timeoutMs?: number): Promise<boolean> {
  return new Promise((resolve) => {
    if (check()) {
      resolve(true);
      return;
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const waiter: Waiter = {
      check,
      wake: (inTime) => {
        waiters.delete(waiter);
        if (timer !== undefined) clearTimeout(timer);
        resolve(inTime);
      },
    };
    if (timeoutMs !== undefined) timer = setTimeout(() => waiter.wake(false), timeoutMs);
    waiters.add(waiter);
  });
}

/** Wakes every waiter whose check now holds, then lets what they wait in run. */
export async function settle(): Promise<void> {
  for (const waiter of [...waiters]) if (waiter.check()) waiter.wake(true);
  for (let turn = 0; turn < 10; turn++) await Promise.resolve();
}

/** Forgets every waiter (between tests). */
export function forgetWaiters(): void {
  waiters.clear();
}
