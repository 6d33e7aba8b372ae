/**
 * Query benchmark (`npm run bench:query`): loads BENCH_CALLS calls (default 1,000,000) into the
 * embedded store of a fresh (or reused: BENCH_DATA_DIR) data dir, then times representative
 * queries over real HTTP against the all-in-one server in this process.
 *
 * Loading takes the fast path: INSERT … SELECT FROM numbers() into call_parts (start and end
 * parts), which runs the same materialized views as the writer does. Right after loading, start
 * and end parts are separate rows (the worst case for reads); BENCH_OPTIMIZE=1 first merges them
 * (the steady state once ClickHouse's background merges have caught up).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, loadConfig } from '@weft/core';
import { basicAuth, HARNESS_API_KEY } from '@weft/harness';
import { createWeft } from '../services/all-in-one/src/app';
import { loadBenchCalls } from './query-data';

const N = Number(process.env.BENCH_CALLS ?? 1_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const P = 'bench/main';
const dataDir = process.env.BENCH_DATA_DIR ?? mkdtempSync(join(tmpdir(), 'weft-bench-query-'));

const config = loadConfig({ ...process.env, WEFT_DATA_DIR: dataDir, LOG_LEVEL: 'warn', PORT: '0', HOST: '127.0.0.1', WEFT_BOOTSTRAP_API_KEY: HARNESS_API_KEY });
const weft = await createWeft(config, createLogger('warn', { mode: 'bench' }));
await weft.app.listen({ port: 0, host: '127.0.0.1' });
const url = `http://127.0.0.1:${(weft.app.server.address() as { port: number }).port}`;
const client = weft.store.client;

async function scalar(sql: string): Promise<number> {
  const rs = await client.query({ query: sql, format: 'JSONEachRow' });
  const [row] = await rs.json<Record<string, number>>();
  return Number(Object.values(row ?? {})[0] ?? 0);
}

const load = (project: string, n: number) => loadBenchCalls(client, project, n);

async function timed(label: string, fn: () => Promise<string>): Promise<void> {
  const times: number[] = [];
  let note = '';
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    note = await fn();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  console.log(`${label.padEnd(58)} median ${times[Math.floor(times.length / 2)]!.toFixed(0).padStart(6)} ms  (min ${times[0]!.toFixed(0)}, max ${times[times.length - 1]!.toFixed(0)})  ${note}`);
}

const auth = { authorization: basicAuth(HARNESS_API_KEY), 'content-type': 'application/json' };
const post = (path: string, body: unknown) => fetch(url + path, { method: 'POST', headers: auth, body: JSON.stringify(body) });

/** Time to the first JSONL line, then the stream is cancelled (the server aborts its query). */
async function firstRow(body: unknown): Promise<string> {
  const res = await post('/calls/stream_query', body);
  if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`);
  const reader = res.body!.getReader();
  const { value } = await reader.read();
  await reader.cancel();
  return `first chunk ${value?.length ?? 0} bytes`;
}

async function whole(path: string, body: unknown): Promise<string> {
  const res = await post(path, body);
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${res.status} ${text}`);
  const lines = text.split('\n').filter(Boolean);
  return lines.length === 1 ? lines[0]!.slice(0, 80) : `${lines.length} rows`;
}

const have = await scalar(`SELECT count() FROM (SELECT id FROM calls_merged WHERE project_id = '${P}' GROUP BY id)`);
if (have < N) {
  const t0 = performance.now();
  await load(P, N);
  // A neighbour project, so that scoping by project is part of what is measured.
  await load('bench/other', Math.floor(N / 5));
  const s = (performance.now() - t0) / 1000;
  console.log(`loaded ${N} + ${Math.floor(N / 5)} calls (2 parts each) in ${s.toFixed(1)} s: ${((N * 1.2) / s).toFixed(0)} calls/s`);
}
if (process.env.BENCH_OPTIMIZE === '1') {
  // The steady state once background merges have caught up: one row per call.
  const t0 = performance.now();
  await client.command({ query: 'OPTIMIZE TABLE calls_merged FINAL' });
  await client.command({ query: 'OPTIMIZE TABLE calls_merged_stats FINAL' });
  console.log(`merged all parts (OPTIMIZE FINAL) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
const parts = await scalar(`SELECT count() FROM calls_merged`);
console.log(`store: ${dataDir}; ${N} calls in ${P}; calls_merged rows (unmerged parts included): ${parts}; runs per query: ${RUNS}`);

await timed('stream: first row (default order, no filter)', () => firstRow({ project_id: P }));
await timed('stream: first row (op_name filter + $expr, sort started_at desc)', () =>
  firstRow({ project_id: P, filter: { op_names: ['op-7'] }, query: { $expr: { $gt: [{ $getField: 'inputs.n' }, { $literal: 500 }] } }, sort_by: [{ field: 'started_at', direction: 'desc' }] }),
);
await timed('stream: one trace by trace_ids (skip index), whole', () => whole('/calls/stream_query', { project_id: P, filter: { trace_ids: [`t-c-${String(Math.floor(N / 20) * 10).padStart(9, '0')}`] } }));
await timed('stream: 100 rows sorted on a dotted field (inputs.n desc)', () =>
  whole('/calls/stream_query', { project_id: P, sort_by: [{ field: 'inputs.n', direction: 'desc' }], limit: 100 }),
);
await timed('stream: 100 rows sorted on summary.weave.latency_ms, costs', () =>
  whole('/calls/stream_query', { project_id: P, sort_by: [{ field: 'summary.weave.latency_ms', direction: 'desc' }], limit: 100, include_costs: true }),
);
await timed('count: whole project', () => whole('/calls/query_stats', { project_id: P }));
await timed('count: filtered (op_names + $expr on inputs.n + status)', () =>
  whole('/calls/query_stats', {
    project_id: P,
    filter: { op_names: ['op-3', 'op-4'] },
    query: { $expr: { $and: [{ $gte: [{ $getField: 'inputs.n' }, { $literal: 250 }] }, { $eq: [{ $getField: 'summary.weave.status' }, { $literal: 'success' }] }] } },
  }),
);
await timed('threads: all threads of the project (turn calls only)', () => whole('/threads/stream_query', { project_id: P }));
await timed('threads: top 20 by turn_count after a datetime', () =>
  whole('/threads/stream_query', { project_id: P, filter: { after_datetime: new Date(Date.UTC(2024, 0, 1) + N * 5).toISOString() }, sort_by: [{ field: 'turn_count', direction: 'desc' }], limit: 20 }),
);
await timed('stream: 20,000 rows to the end (keyset pages)', () => whole('/calls/stream_query', { project_id: P, filter: { op_names: ['op-1'] }, limit: 20_000 }));

await weft.close();
