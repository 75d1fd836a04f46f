import { abortedOutcome, errorOutcome } from '../../src/shared/tool-outcome';
import { ToolCircuitBreakers } from '../../src/tools/circuit-breaker';
import { CircuitGuard } from '../../src/tools/circuit-guard';
import { circuitBreakerSettingsFromEnv } from '../../src/worker/circuit-breaker-settings';

function breakersAt(start = 1_000_000) {
  let now = start;
  const breakers = new ToolCircuitBreakers({ failureThreshold: 3, coolDownMs: 10_000 }, () => now);
  return { breakers, advance: (ms: number) => (now += ms) };
}

test('failures in a row open the circuit; a success in between starts the count again', () => {
  const { breakers } = breakersAt();
  breakers.failed('exec', 'boom');
  breakers.failed('exec', 'boom');
  breakers.succeeded('exec');
  breakers.failed('exec', 'boom');
  breakers.failed('exec', 'boom');
  expect(breakers.admit('exec')).toEqual({ run: true, trial: false });
  breakers.failed('exec', 'disk gone');
  expect(breakers.admit('exec')).toEqual({
    run: false,
    retryAtMs: 1_010_000,
    failures: 3,
    lastFailure: 'disk gone',
  });
  // Other tools are not affected.
  expect(breakers.admit('read')).toEqual({ run: true, trial: false });
});

test('after the cool-down one trial runs while the others wait; its failure opens the circuit again', () => {
  const { breakers, advance } = breakersAt();
  for (let i = 0; i < 3; i++) breakers.failed('web_fetch', 'timeout');
  advance(10_000);
  expect(breakers.admit('web_fetch')).toEqual({ run: true, trial: true });
  expect(breakers.snapshot()[0]).toMatchObject({ state: 'half_open' });
  expect(breakers.admit('web_fetch')).toMatchObject({ run: false });
  breakers.failed('web_fetch', 'still down');
  expect(breakers.admit('web_fetch')).toMatchObject({ run: false, retryAtMs: 1_020_000, failures: 4 });
  advance(10_000);
  expect(breakers.admit('web_fetch')).toEqual({ run: true, trial: true });
  breakers.succeeded('web_fetch');
  expect(breakers.snapshot()).toEqual([]);
  expect(breakers.admit('web_fetch')).toEqual({ run: true, trial: false });
});

test('a trial that ends without a verdict (cancelled) lets the next call be the trial', () => {
  const { breakers, advance } = breakersAt();
  for (let i = 0; i < 3; i++) breakers.failed('exec', 'x');
  advance(10_000);
  expect(breakers.admit('exec')).toEqual({ run: true, trial: true });
  breakers.released('exec');
  expect(breakers.admit('exec')).toEqual({ run: true, trial: true });
});

test('a threshold of 0 turns breakers off; settings come from the environment and bad ones are refused', () => {
  const off = new ToolCircuitBreakers({ failureThreshold: 0, coolDownMs: 1 });
  for (let i = 0; i < 10; i++) off.failed('exec', 'x');
  expect(off.admit('exec')).toEqual({ run: true, trial: false });
  expect(circuitBreakerSettingsFromEnv({})).toEqual({ failureThreshold: 5, coolDownMs: 60_000 });
  expect(
    circuitBreakerSettingsFromEnv({
      AGENT_TOOL_BREAKER_FAILURES: '0',
      AGENT_TOOL_BREAKER_COOLDOWN_MS: '500',
    }),
  ).toEqual({ failureThreshold: 0, coolDownMs: 500 });
  expect(() => circuitBreakerSettingsFromEnv({ AGENT_TOOL_BREAKER_FAILURES: 'many' })).toThrow(
    'AGENT_TOOL_BREAKER_FAILURES must be a whole number, not "many"',
  );
});

describe('the guard around a call', () => {
  const guarded = () => {
    const { breakers, advance } = breakersAt();
    const changes: string[] = [];
    const guard = new CircuitGuard(breakers);
    const watch = {
      thrown: (error: unknown) => ({ kind: 'fails' as const, why: (error as Error).message }),
      changed: (state: string, opened: boolean) => void changes.push(opened ? `${state} (opened)` : state),
    };
    return { breakers, advance, guard, watch, changes };
  };

  test("a fault of the tool counts with the message the call gave; a caller's error says the tool works", async () => {
    const { breakers, guard, watch, changes } = guarded();
    const failing = errorOutcome('inventory', 'ExecutionFailed', 'refused');
    for (let i = 0; i < 2; i++)
      await guard.observe('inventory', async () => ({ outcome: failing, message: 'x'.repeat(400) }), watch);
    await guard.observe(
      'inventory',
      async () => ({ outcome: errorOutcome('inventory', 'InvalidArgs', 'bad') }),
      watch,
    );
    expect(breakers.snapshot()).toEqual([]);
    for (let i = 0; i < 3; i++)
      await guard.observe('inventory', async () => ({ outcome: failing, message: 'x'.repeat(400) }), watch);
    expect(changes).toEqual(['open (opened)']);
    const refusal = guard.admit('inventory');
    expect(refusal).toMatchObject({ run: false, outcome: { status: 'error', errorKind: 'Unavailable' } });
    const notice = JSON.parse(
      (refusal as { outcome: { content: Array<{ text: string }> } }).outcome.content[0]!.text,
    );
    // The last failure is cut as the notice always cut it.
    expect(notice.error).toContain(`(last: ${'x'.repeat(200)}`);
    expect(notice.error).toMatch(/…\[truncated: \d+ of 400 bytes omitted\]\); retry after that/);
  });

  test('an interrupted call and a refusal by a hook say nothing; a throw counts as its caller says', async () => {
    const { breakers, advance, guard, watch, changes } = guarded();
    for (let i = 0; i < 3; i++) breakers.failed('exec', 'x');
    advance(10_000);
    expect(guard.admit('exec')).toEqual({ run: true });
    await guard.observe('exec', async () => ({ outcome: abortedOutcome('exec', 'steered') }), watch);
    expect(guard.admit('exec')).toEqual({ run: true });
    guard.notRun('exec');
    expect(guard.admit('exec')).toEqual({ run: true });
    await expect(
      guard.observe('exec', () => Promise.reject(new Error('\u001b[31mdisk gone')), watch),
    ).rejects.toThrow('disk gone');
    // Back to open after the silent trial (no new opening), then opened by the failed one.
    expect(changes).toEqual(['open', 'open (opened)']);
    expect(breakers.snapshot()[0]).toMatchObject({ state: 'open', lastFailure: '\u001b[31mdisk gone' });
    // What the model reads is clean.
    const refusal = guard.admit('exec') as { outcome: { content: Array<{ text: string }> } };
    expect(refusal.outcome.content[0]!.text).toContain('(last: disk gone)');
  });
});
