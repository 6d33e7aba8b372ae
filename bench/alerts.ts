/**
 * Alerts benchmark (`npm run bench:alerts`): BENCH_ALERTS active AlertSpecs (default 1,000) over
 * a project of BENCH_CALLS calls (default 10,000,000: bench:query's data set, query-data.ts,
 * its 20 ops as op refs, spread over the last 24 hours), and the alert worker's evaluation pass
 * (the query role's AlertWorker, run here in the server's own process, in the background lane):
 *   - one pass alone: wall time, the process's CPU (server and embedded engine) per pass and per alert;
 *   - interactive latency — a page of 50 calls of one op (/calls/stream_query) and a count
 *     (/calls/query_stats), BENCH_RUNS times each (default 20) — alone, then beside a pass.
 * The alerts are six kinds, in turn: an op's mean score over its last 100 calls, its error
 * percentage over 5 minutes, its p95 latency over its last 1,000 calls, the project's tokens per
 * hour, its error count per hour, an op's mean input over Weave's default window (10 calls).
 * The server's own alert worker is off (WEFT_ALERTS_INTERVAL_MS=0): every pass is the bench's.
 */
import { mkdtempSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@weft/core';
import { basicAuth, HARNESS_API_KEY } from '@weft/harness';
import { AlertWorker, urlPolicyOf } from '@weft/svc-query';
import { startBenchWeft } from './bench-weft';
import { loadBenchCallRange } from './query-data';

const N = Number(process.env.BENCH_CALLS ?? 10_000_000);
const ALERTS = Number(process.env.BENCH_ALERTS ?? 1000);
const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const P = 'bench/alerts';
const DAY_MS = 86_400_000;
process.env.BENCH_DATA_DIR ??= mkdtempSync(join(tmpdir(), 'weft-bench-alerts-'));
process.env.WEFT_ALERTS_INTERVAL_MS = '0';
process.env.WEFT_RATE_LIMIT_MAX = '0';
const { weft, url, client } = await startBenchWeft('alerts');
const headers = { authorization: basicAuth(HARNESS_API_KEY), 'content-type': 'application/json' };
const post = async (path: string, body: unknown) => {
  const res = await fetch(url + path, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${path} → ${res.status} ${text}`);
  return text;
};
const scalar = async (sql: string) => {
  const rs = await client.query({ query: sql, format: 'JSONEachRow' });
  return Number(Object.values((await rs.json<Record<string, string>>())[0] ?? {})[0] ?? 0);
};
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
console.log(`machine: ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), Node ${process.version}`);

// The calls: the data set of bench:query, ending now (a reused BENCH_DATA_DIR keeps them).
if ((await scalar(`SELECT count() FROM calls_starts WHERE project_id = '${P}'`)) < N) {
  const stepMs = Math.max(1, Math.floor(DAY_MS / N));
  const startAt = new Date(Date.now() - N * stepMs).toISOString().replace('T', ' ').replace('Z', '');
  const t0 = performance.now();
  const CHUNK = 1_000_000;
  for (let from = 0; from < N; from += CHUNK)
    await loadBenchCallRange(client, P, from, Math.min(N, from + CHUNK), 0, stepMs, 'split', { startAt, opRefs: true });
  console.log(
    `loaded ${fmt(N)} calls of 20 ops over the last ${((N * stepMs) / 3_600_000).toFixed(1)} h in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
}

// The alerts: AlertSpecs as the SDK stores them, published over /obj/create.
const op = (i: number) => `weave:///${P}/op/op-${i % 20}:*`;
function alertSpec(i: number): { op_scope: string[] | null; spec: Record<string, unknown> } {
  switch (i % 6) {
    case 0:
      return {
        op_scope: [op(i)],
        spec: { metric_path: 'output.score', comparison_operator: 'LESS_THAN', threshold: 0.5, window_size: 100 },
      };
    case 1:
      return {
        op_scope: [op(i)],
        spec: {
          aggregation_function: 'percentage',
          status_match_value: 'error',
          comparison_operator: 'GREATER_THAN',
          threshold: 5,
          window_duration: 300,
        },
      };
    case 2:
      return {
        op_scope: [op(i)],
        spec: { metric_path: 'latency', weft_aggregation: 'p95', comparison_operator: 'GREATER_THAN', threshold: 800, window_size: 1000 },
      };
    case 3:
      return {
        op_scope: null,
        spec: {
          metric_path: 'tokens',
          weft_aggregation: 'sum',
          comparison_operator: 'GREATER_THAN',
          threshold: 1e9,
          window_duration: 3600,
        },
      };
    case 4:
      return {
        op_scope: null,
        spec: {
          aggregation_function: 'count',
          status_match_value: 'error',
          comparison_operator: 'GREATER_THAN',
          threshold: 100,
          window_duration: 3600,
        },
      };
    default:
      return { op_scope: [op(i)], spec: { metric_path: 'inputs.n', comparison_operator: 'GREATER_THAN', threshold: 900 } };
  }
}
{
  const t0 = performance.now();
  let next = 0;
  const publish = async () => {
    while (next < ALERTS) {
      const i = next++;
      const name = `alert-${String(i).padStart(5, '0')}`;
      const { op_scope, spec } = alertSpec(i);
      await post('/obj/create', {
        obj: {
          project_id: P,
          object_id: name,
          val: {
            _type: 'AlertSpec',
            name,
            description: null,
            op_scope,
            spec: { alert_condition: 'THRESHOLD', source_type: 'calls', aggregation_function: 'mean', ...spec },
            _class_name: 'AlertSpec',
            _bases: ['BaseObject', 'BaseModel'],
          },
        },
      });
    }
  };
  await Promise.all(Array.from({ length: 8 }, publish));
  console.log(`alerts: ${fmt(ALERTS)} AlertSpecs (6 kinds) published in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

const worker = new AlertWorker(weft.store, createLogger('warn', { mode: 'bench' }), { intervalMs: 60_000, urlPolicy: urlPolicyOf('') });

/** One pass: wall and CPU (ms) of this process (the server and the embedded engine). */
async function timedPass(): Promise<{ wall: number; cpu: number }> {
  const c0 = process.cpuUsage();
  const w0 = performance.now();
  await worker.pass();
  const cpu = process.cpuUsage(c0);
  return { wall: performance.now() - w0, cpu: (cpu.user + cpu.system) / 1000 };
}

const evaluated = async () =>
  scalar(`SELECT count() FROM alert_states FINAL WHERE project_id = '${P}' AND evaluated_at >= now64(6) - toIntervalSecond(600)`);
const firing = async () => scalar(`SELECT countIf(state = 'firing') FROM alert_states FINAL WHERE project_id = '${P}'`);

const first = await timedPass();
console.log(
  `first pass: ${fmt(await evaluated())} of ${fmt(ALERTS)} alerts evaluated (${fmt(await firing())} firing) in ${fmt(first.wall)} ms, CPU ${fmt(first.cpu)} ms`,
);
const alone = await timedPass();
console.log(
  `pass alone: wall ${fmt(alone.wall)} ms, CPU ${fmt(alone.cpu)} ms per pass, ${(alone.cpu / ALERTS).toFixed(2)} ms per alert (wall ${(alone.wall / ALERTS).toFixed(2)} ms per alert)`,
);

// Interactive: what a person waits for while the pass runs.
const interactive = {
  'calls page (50 of one op)': () =>
    post('/calls/stream_query', {
      project_id: P,
      filter: { op_names: [`weave:///${P}/op/op-3:v1`] },
      limit: 50,
      sort_by: [{ field: 'started_at', direction: 'desc' }],
    }),
  'count (one op)': () => post('/calls/query_stats', { project_id: P, filter: { op_names: [`weave:///${P}/op/op-3:v1`] } }),
};
const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
};
async function sample(f: () => Promise<unknown>, until: () => boolean): Promise<number[]> {
  const out: number[] = [];
  while (!until() || out.length < 3) {
    const t0 = performance.now();
    await f();
    out.push(performance.now() - t0);
  }
  return out;
}
const line = (label: string, xs: number[]) =>
  `${label}: median ${fmt(quantile(xs, 0.5))} ms, p95 ${fmt(quantile(xs, 0.95))} ms (${xs.length} runs)`;
for (const [name, f] of Object.entries(interactive)) {
  await f(); // warm
  let n = 0;
  console.log(line(`interactive alone, ${name}`, await sample(f, () => ++n > RUNS)));
}
for (const [name, f] of Object.entries(interactive)) {
  // The pass is a background job (PeriodicWorker: inLane('background')); the requests are interactive.
  let done = false;
  const pass = timedPass().then((r) => ((done = true), r));
  const xs = await sample(f, () => done);
  const p = await pass;
  console.log(`${line(`interactive beside a pass, ${name}`, xs)}; the pass took ${fmt(p.wall)} ms, CPU ${fmt(p.cpu)} ms`);
}

await worker.stop();
await weft.close();
process.exit(0);
