/**
 * Retention benchmark (`npm run bench:retention`): loads BENCH_CALLS calls (default 10,000,000)
 * spread over 30 days into a fresh data dir (bench:query's data set, query-data.ts), with
 * feedback on every 100th call, sets the project's retention to 15 days, and times one
 * retention pass (the writer's RetentionSweeper, run here in the server's own process): wall
 * time, the process's CPU (server and embedded engine), peak RSS growth, rows left.
 */
import { mkdtempSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@weft/core';
import { basicAuth, HARNESS_API_KEY } from '@weft/harness';
import { RetentionSweeper } from '@weft/svc-writer';
import { startBenchWeft } from './bench-weft';
import { loadBenchCallRange } from './query-data';

const N = Number(process.env.BENCH_CALLS ?? 10_000_000);
const DAYS = 30;
const KEEP_DAYS = 15;
const P = 'bench/retention';
process.env.BENCH_DATA_DIR ??= mkdtempSync(join(tmpdir(), 'weft-bench-retention-'));
const { weft, url, client } = await startBenchWeft('retention');

const count = async (sql: string) => {
  const rs = await client.query({ query: sql, format: 'JSONEachRow' });
  return Number(Object.values((await rs.json<Record<string, string>>())[0] ?? {})[0] ?? 0);
};

// The data ends now: its newest call started a moment ago, its oldest 30 days back.
const stepMs = Math.max(1, Math.floor((DAYS * 86_400_000) / N));
const CHUNK = 1_000_000;
const t0 = performance.now();
for (let from = 0; from < N; from += CHUNK) await loadBenchCallRange(client, P, from, Math.min(N, from + CHUNK), 0, stepMs);
const shiftMs = Date.now() - Date.parse('2024-01-01T00:00:00Z') - N * stepMs;
console.log(
  `loaded ${N} calls over ${DAYS} days in ${((performance.now() - t0) / 1000).toFixed(1)} s; ${cpus().length} cores (${cpus()[0]?.model ?? '?'})`,
);
await client.command({
  query: `INSERT INTO feedback (project_id, svc_ref, svc_user_id, id, feedback_type, payload_dump, created_at)
    SELECT '${P}', concat('weave:///${P}/call/c-', leftPad(toString(number * 100), 9, '0')), 'bench-user', toString(generateUUIDv4()),
      'wandb.note.1', '{"note":"x"}', now64(3) FROM numbers(${Math.floor(N / 100)})`,
});
const res = await fetch(`${url}/project/ttl_settings/update`, {
  method: 'POST',
  headers: { authorization: basicAuth(HARNESS_API_KEY), 'content-type': 'application/json' },
  body: JSON.stringify({ project_id: P, retention_days: KEEP_DAYS }),
});
if (res.status !== 200) throw new Error(`ttl_settings/update: ${res.status} ${await res.text()}`);

// The loaded calls are dated from 2024-01-01: the sweeper's clock is moved so they end now.
const sweeper = new RetentionSweeper(weft.store, createLogger('warn', { mode: 'bench' }), {
  intervalMs: 3_600_000,
  now: () => Date.now() - shiftMs,
});
const before = await count(`SELECT count() FROM calls_starts WHERE project_id = '${P}'`);
const rss0 = process.memoryUsage.rss();
let peak = rss0;
const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 20);
const c0 = process.cpuUsage();
const w0 = performance.now();
await sweeper.pass();
const wall = performance.now() - w0;
const cpu = process.cpuUsage(c0);
clearInterval(sampler);
const after = await count(`SELECT count() FROM calls_starts WHERE project_id = '${P}'`);
const ends = await count(`SELECT count() FROM calls_ends WHERE project_id = '${P}'`);
const feedback = await count(`SELECT count() FROM feedback WHERE project_id = '${P}'`);
console.log(
  `retention pass: ${before.toLocaleString('en-US')} → ${after.toLocaleString('en-US')} calls (${ends.toLocaleString('en-US')} end rows, ${feedback.toLocaleString('en-US')} feedback left) in ${wall.toFixed(0)} ms, CPU ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms, peak RSS +${((peak - rss0) / 1048576).toFixed(0)} MiB`,
);
const w1 = performance.now();
await sweeper.pass();
console.log(`second pass (nothing expired): ${(performance.now() - w1).toFixed(0)} ms`);
await weft.close();
process.exit(0);
