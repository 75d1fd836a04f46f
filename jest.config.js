/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.ts$': ['@swc/jest'],
    // The ACP SDK ships only ES modules; tests load it as CommonJS like the rest.
    '/node_modules/@agentclientprotocol/.+\\.js$': ['@swc/jest', { module: { type: 'commonjs' } }],
    // So does jose, which the A2A SDK's client loads.
    '/node_modules/jose/.+\\.js$': ['@swc/jest', { module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: ['/node_modules/(?!@agentclientprotocol/|jose/)'],
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  // Built and fetched tools (Node releases with package.json files of their own among them).
  modulePathIgnorePatterns: ['<rootDir>/.tools/'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  setupFilesAfterEnv: ['<rootDir>/test/support/nock-restore.ts'],
  testTimeout: 120_000,
  // Integration tests share one dev server; two at a time keeps a 2-core machine responsive.
  maxWorkers: 2,
};
