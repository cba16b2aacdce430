/** @type {import('jest').Config} */
const shared = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/test/tsconfig.json' }],
  },
  moduleNameMapper: {
    '^@sandbox/(errors|config|logger|proto|sandboxctl|runner|contract)$':
      '<rootDir>/packages/$1/src',
    '^@sandbox/contract/run$': '<rootDir>/packages/contract/src/run',
    '^@sandbox/(gateway|agent|edge-proxy)$': '<rootDir>/services/$1/src',
    '^@sandbox/sdk$': '<rootDir>/packages/sdk/src',
    // The SDK's sources import each other as ESM does, by their .js names.
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
};

module.exports = {
  projects: [
    {
      ...shared,
      displayName: 'unit',
      testMatch: [
        '<rootDir>/packages/*/src/**/*.test.ts',
        '<rootDir>/packages/sdk/test/**/*.test.ts',
        '<rootDir>/services/*/src/**/*.test.ts',
        // Static checks of the deployment files (no service started).
        '<rootDir>/test/deploy/**/*.test.ts',
      ],
    },
    {
      ...shared,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
    },
    {
      ...shared,
      displayName: 'security',
      testMatch: ['<rootDir>/test/security/**/*.test.ts'],
    },
    {
      ...shared,
      displayName: 'chaos',
      testMatch: ['<rootDir>/test/chaos/**/*.test.ts'],
    },
  ],
  // A global option (projects cannot set it): integration tests start containers and servers.
  testTimeout: 60_000,
};
