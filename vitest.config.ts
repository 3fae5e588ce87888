import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // moto_server (AWS wire protocol) is started once for the whole run on a free loopback port.
    globalSetup: ['test/support/moto-global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // CI has two cores: more workers than that only adds contention.
    maxWorkers: 2,
  },
});
