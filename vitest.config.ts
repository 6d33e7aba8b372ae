import { defineConfig } from 'vitest/config';

/**
 * Four projects; `npm test` (vitest run) runs them all, `vitest run --project unit` only one.
 *   unit  — libraries and services in-process (no server process, no broker); test/unit: repo-wide checks
 *   e2e   — real server processes over real HTTP, embedded ClickHouse
 *   kafka — the distributed topology on a real Apache Kafka broker (started once for the project)
 *   fuzz  — schemathesis against a real server (slow; installs its tool into .cache/)
 * A new test file lands in a project by its place and name: test/kafka-*.test.ts → kafka,
 * test/fuzz*.test.ts → fuzz, test/bench.test.ts, test/overload.test.ts, test/front-proxy.test.ts → kafka, other test/*.test.ts → e2e, libs|services/<x>/test → unit.
 */
// Also on the project's shared broker: bench.test.ts and overload.test.ts (their Kafka modes),
// front-proxy.test.ts (the standalone mains behind nginx).
const kafka = [
  'test/kafka-*.test.ts',
  'test/**/kafka-*.test.ts',
  'test/fault/**/*.test.ts',
  'test/bench.test.ts',
  'test/overload.test.ts',
  'test/front-proxy.test.ts',
];
const fuzz = ['test/fuzz*.test.ts'];

export default defineConfig({
  test: {
    pool: 'forks',
    // Our machines have 2 cores; each server-backed test file runs its own weft process.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 180_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['libs/*/test/**/*.test.ts', 'services/*/test/**/*.test.ts', 'test/unit/**/*.test.ts'],
          globalSetup: ['test/helpers/scratch-setup.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/**/*.test.ts'],
          exclude: [...kafka, ...fuzz, 'test/unit/**'],
          globalSetup: ['test/helpers/scratch-setup.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'kafka',
          include: kafka,
          globalSetup: ['test/helpers/scratch-setup.ts', 'test/helpers/kafka-setup.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'fuzz',
          include: fuzz,
          globalSetup: ['test/helpers/scratch-setup.ts'],
        },
      },
    ],
  },
});
