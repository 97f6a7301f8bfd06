/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest'] },
  testTimeout: 60000,
  // integration suites start real redis-server and child processes; two cores
  maxWorkers: 2,
  // Every suite stops its redis-server and replicas in afterAll (checked: no orphan processes);
  // idle keep-alive sockets of fetch's global pool must not keep a worker alive in CI.
  forceExit: true,
};
