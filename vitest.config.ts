import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'libs/*/test/**/*.test.ts', 'services/*/test/**/*.test.ts'],
    pool: 'forks',
    // Our machines have 2 cores; each server-backed test file runs its own weft process.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 180_000,
    globalSetup: ['test/helpers/global-setup.ts'],
  },
});
