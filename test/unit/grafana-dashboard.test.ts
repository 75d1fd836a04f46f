import { readFileSync } from 'node:fs';
import path from 'node:path';
import { METRIC } from '../../src/shared/agent-metrics';

test('the Grafana dashboard queries only series the runtime exports', () => {
  const dashboard = readFileSync(path.join(__dirname, '../../deploy/grafana/durable-agent.json'), 'utf8');
  const used = new Set(dashboard.match(/durable_agent_[a-z_]+/g));
  const exported = new Set(
    Object.values(METRIC).flatMap((name) => [
      name,
      `${name}_total`,
      `${name}_bucket`,
      `${name}_count`,
      `${name}_sum`,
    ]),
  );
  expect([...used].filter((name) => !exported.has(name))).toEqual([]);
  // Every series the runtime exports has a panel.
  const shown = Object.values(METRIC).filter((name) => [...used].some((series) => series.startsWith(name)));
  expect(shown.sort()).toEqual(Object.values(METRIC).sort());
});
