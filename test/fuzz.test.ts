import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ARTIFACTS_DIR } from '@weft/harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpoints, publishedExtraEndpoints, type EndpointSpec } from '@weft/api';
import { Client } from './helpers/client';
import { REPO_ROOT, TEST_ROOT } from './helpers/paths';
import { ensureSchemathesis } from './helpers/schemathesis';
import { startWeft, type RunningWeft } from './helpers/server';

/**
 * Schemathesis against every operation of /openapi.json: examples, the coverage phase
 * (boundary and negative values of every field) and random fuzzing, positive and negative.
 * Passes when no response is a 5xx (test/fuzz/schemathesis.toml) and no request hangs (per-request timeout, hard run timeout).
 */
const MAX_EXAMPLES = process.env.WEFT_FUZZ_MAX_EXAMPLES ?? '8';
const RUN_TIMEOUT_MS = 480_000;

let weft: RunningWeft;
let st: string[];

beforeAll(async () => {
  [st, weft] = await Promise.all([ensureSchemathesis(), startWeft({ env: { WEFT_RATE_LIMIT_MAX: '0' } })]);
}, 900_000);
afterAll(async () => {
  await weft?.stop();
});

function runSchemathesis(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    // Run in the scratch directory: schemathesis and hypothesis leave caches in their working directory.
    const child = spawn(st[0]!, [...st.slice(1), ...args], { cwd: TEST_ROOT, env: { ...process.env, NO_COLOR: '1' } });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const timer = setTimeout(() => {
      output += `\n[killed: no result after ${RUN_TIMEOUT_MS / 1000}s]`;
      child.kill('SIGKILL');
    }, RUN_TIMEOUT_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe('API fuzzing (schemathesis)', () => {
  it(
    'finds no server error and no hang on any endpoint',
    async () => {
      const { code, output } = await runSchemathesis([
        '--config-file',
        join(REPO_ROOT, 'test', 'fuzz', 'schemathesis.toml'),
        'run',
        `${weft.url}/openapi.json`,
        // The operations with a full contract (request and response schemas): the 20 and the published extras.
        '--include-tag',
        'interface',
        '--include-tag',
        'extra',
        '--checks',
        'not_a_server_error',
        '--phases',
        'examples,coverage,fuzzing',
        '--max-examples',
        MAX_EXAMPLES,
        '--request-timeout',
        '20',
        // One worker: the generator is not thread-safe on every Python.
        '--workers',
        '1',
        '--seed',
        '20261122',
        '--generation-database',
        'none',
        '--no-color',
      ]);
      const summary = /Test cases:\s*\n\s*(.+)/.exec(output)?.[1]?.trim() ?? 'no summary';
      const operations = /Tested:\s*(\d+)/.exec(output)?.[1];
      console.log(`schemathesis: ${operations} operations, test cases: ${summary}`);
      // The whole report is kept (the failures come before pages of warnings); the assertion shows the failures.
      mkdirSync(ARTIFACTS_DIR, { recursive: true });
      writeFileSync(join(ARTIFACTS_DIR, 'schemathesis.txt'), output);
      const failures = /={5,} FAILURES ={5,}[\s\S]*?(?=={5,} (?:WARNINGS|SUMMARY) ={5,})/.exec(output)?.[0] ?? output.slice(-6000);
      expect(code, failures.slice(0, 12_000)).toBe(0);
      // The 20 of the interface (and their aliases) and the extras the document publishes (the UI's read endpoints).
      const interfacePaths = Object.values(endpoints).reduce((n, e: EndpointSpec) => n + 1 + (e.aliases?.length ?? 0), 0);
      expect(Number(operations)).toBe(interfacePaths + publishedExtraEndpoints().length);
      const m = /(\d+) generated, (\d+) passed/.exec(summary);
      expect(m, summary).not.toBeNull();
      expect(Number(m![1])).toBeGreaterThan(500);
      expect(m![2]).toBe(m![1]);
      // The server is still answering after all of it.
      expect((await new Client(weft.url).post('/calls/query_stats', { project_id: 'fuzz/after' })).status).toBe(200);
    },
    RUN_TIMEOUT_MS + 30_000,
  );
});
