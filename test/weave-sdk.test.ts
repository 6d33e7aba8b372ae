import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from './helpers/client';
import { createKey, type TestKey } from './helpers/keys';
import { REPO_ROOT, TEST_ROOT } from './helpers/paths';
import { startWeft, type RunningWeft } from './helpers/server';
import { ensureWeaveSdk, WEAVE_SDKS, weaveUserEnv } from './helpers/weave-sdk';

/**
 * The official Weave Python SDK, unmodified, against a real weft (test/weave-sdk/scenario.py):
 * weave.init with only WANDB_BASE_URL and WANDB_API_KEY, tracing (nested calls, exceptions),
 * publishing and reading objects, models, datasets and ops, querying, renaming and deleting
 * calls, feedback, and an Evaluation with a scorer, checked through the SDK and through raw
 * /calls/stream_query. Each pinned release runs in its own project of one server.
 */
const SCENARIO_TIMEOUT_MS = 240_000;

let weft: RunningWeft;
let key: TestKey;
const pythons = new Map<string, string>();

beforeAll(async () => {
  const [installed, server] = await Promise.all([
    Promise.all(WEAVE_SDKS.map(async (sdk) => [sdk.version, await ensureWeaveSdk(sdk)] as const)),
    // The SDK's batches through the ingest worker threads (the default on 4+ cores; test/calls.test.ts covers the serving thread).
    startWeft({ env: { WEFT_RATE_LIMIT_MAX: '0', WEFT_INGEST_WORKERS: '1' } }),
  ]);
  weft = server;
  expect(weft.logs.some((l: any) => l?.msg === 'request bodies of the ingest routes are converted on worker threads')).toBe(true);
  for (const [version, python] of installed) pythons.set(version, python);
  const admin = new Client(weft.url);
  expect((await admin.post('/admin/entities/create', { name: 'sdkteam' })).status).toBe(200);
  key = await createKey(admin, 'sdk-user', ['sdkteam']);
}, 1_800_000);
afterAll(async () => {
  await weft?.stop();
});

function runScenario(
  version: string,
  project: string,
): Promise<{ code: number | null; output: string; last: Record<string, unknown> | null }> {
  const scratch = mkdtempSync(join(TEST_ROOT, `weave-sdk-${version}-`));
  const env = weaveUserEnv({ scratch, baseUrl: weft.url, apiKey: key.key, project });
  return new Promise((resolve) => {
    const child = spawn(pythons.get(version)!, [join(REPO_ROOT, 'test', 'weave-sdk', 'scenario.py')], { cwd: scratch, env });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const timer = setTimeout(() => {
      output += `\n[killed: no result after ${SCENARIO_TIMEOUT_MS / 1000}s]`;
      child.kill('SIGKILL');
    }, SCENARIO_TIMEOUT_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      const lines = output.split('\n').filter((l) => l.startsWith('{"ok"'));
      resolve({ code, output, last: lines.length ? JSON.parse(lines[lines.length - 1]!) : null });
    });
  });
}

describe('the Weave Python SDK, unmodified, against weft', () => {
  for (const sdk of WEAVE_SDKS) {
    it(
      `weave ${sdk.version}: every flow works end to end, nothing dropped`,
      async () => {
        const project = `sdkteam/e2e-${sdk.version.replace(/\./g, '-')}`;
        const { code, output, last } = await runScenario(sdk.version, project);
        expect(last, output.slice(-6000)).toMatchObject({ ok: true, weave: sdk.version });
        expect(code, output.slice(-6000)).toBe(0);
        expect(Number(last!.checks)).toBeGreaterThanOrEqual(45);
        // weave.init's "Logged in as" line names the key's user, as the UI does, not its id.
        expect(output.split('\n').filter((l) => l.includes('Logged in as'))).toEqual([
          expect.stringMatching(/Logged in as Weights & Biases user: sdk-user\.$/),
        ]);

        // What the SDK wrote is there through the interface's own endpoints too.
        const api = new Client(weft.url).withAuth(`Basic ${Buffer.from(`api:${key.key}`).toString('base64')}`);
        const calls = await api.jsonl('/calls/stream_query', { project_id: project });
        const ops = new Set(calls.map((c: any) => /\/op\/([^:]+):/.exec(c.op_name)?.[1]));
        for (const op of ['count_words', 'tokenize', 'explode', 'shout', 'Evaluation.evaluate', 'Echo.predict', 'exact'])
          expect(ops, op).toContain(op);
        expect(calls.every((c: any) => c.svc_user_id === key.user_id && c.ended_at !== null)).toBe(true);
      },
      SCENARIO_TIMEOUT_MS + 60_000,
    );
  }

  it('answered every SDK request without a server error, and refused nothing but the deleted object read', () => {
    const requests = weft.logs.filter((l: any) => l?.msg === 'request') as { status: number; url: string }[];
    expect(requests.length).toBeGreaterThan(100);
    expect(requests.filter((r) => r.status >= 500)).toEqual([]);
    const refused = requests.filter((r) => r.status >= 400);
    // One read per SDK of the object version the scenario deleted (a 404 is the right answer).
    expect(refused.map((r) => `${r.status} ${r.url}`)).toEqual(WEAVE_SDKS.map(() => '404 /obj/read'));
  });
});
