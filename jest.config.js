const ESM_ONLY = ['@kubernetes/client-node', 'openid-client', 'oauth4webapi', 'jose'];

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['@swc/jest'],
    // @kubernetes/client-node 1.x and its auth dependencies are ESM-only; Jest below Node 24.9
    // cannot require() ESM, so they are compiled to CommonJS like our own files
    [`/node_modules/(${ESM_ONLY.join('|')})/.+\\.m?js$`]: ['@swc/jest'],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${ESM_ONLY.join('|')})/)`],
  testTimeout: 60000,
  // integration suites start real redis-server and child processes; two cores
  maxWorkers: 2,
  // Every suite stops its redis-server and replicas in afterAll (checked: no orphan processes);
  // idle keep-alive sockets of fetch's global pool must not keep a worker alive in CI.
  forceExit: true,
};
