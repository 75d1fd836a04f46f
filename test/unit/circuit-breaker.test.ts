import { ToolCircuitBreakers } from '../../src/tools/circuit-breaker';
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
