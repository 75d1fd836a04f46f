// eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS config, as Jest loads jest.config.js
const base = require('./jest.config.js');

/**
 * `npm run test:cluster`: the integration tests that exercise what a Temporal server does for
 * conversations (signals, updates, child workflows, continue-as-new, worker deployments,
 * schedules, visibility, history), run against one self-hosted cluster (PostgreSQL and Temporal's four services as
 * processes of their own: `durable-agent cluster`) instead of the dev server. Tests of the embedded
 * dev server itself (embedded-server, web-ui, chaos, server kills) stay with `npx jest`.
 * @type {import('jest').Config}
 */
module.exports = {
  ...base,
  testMatch: [
    ...[
      'conversation',
      'lifecycle',
      'approvals',
      'cli-control',
      'steering',
      'sub-agents',
      'continue-as-new',
      'deploy',
      'schedule',
      'sessions',
      'web-ui-visibility',
      'gateway',
      'webhook-crash',
      'acp',
      'history-replay',
    ].map((name) => `<rootDir>/test/integration/${name}.test.ts`),
    '<rootDir>/test/replay/*.test.ts',
    '<rootDir>/test/cluster/fleet.test.ts',
  ],
  globalSetup: '<rootDir>/test/support/cluster-global-setup.ts',
  globalTeardown: '<rootDir>/test/support/cluster-global-teardown.ts',
};
