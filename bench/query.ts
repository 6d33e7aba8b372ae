/**
 * Query benchmark (`npm run bench:query`): loads BENCH_CALLS calls (default 1,000,000) into the
 * embedded store of a fresh (or reused: BENCH_DATA_DIR) data dir, then times representative
 * queries over real HTTP against the all-in-one server in this process.
 *
 * Loading takes the fast path: INSERT … SELECT FROM numbers() into call_parts (start and end
 * parts), which runs the same materialized views as the writer does. Right after loading, start
 * and end parts are separate rows (the worst case for reads); BENCH_OPTIMIZE=1 first merges them
 * (the steady state once ClickHouse's background merges have caught up).
 *
 * Each query runs BENCH_RUNS times (default 5): median and p95 (nearest rank) wall time, the
 * process's CPU time (server, embedded engine and, except for streams, the requesting client: a
 * figure the machine's other load disturbs less than wall time; in server mode plus the engine's
 * process), its peak RSS while the query ran and, for streams, rows/s (wall and per CPU-second).
 * Streams are read by a client in its own process: their CPU is the server's alone, the client's
 * is in the note. Streaming throughput is measured on its own project
 * of ~1 KB calls (BENCH_STREAM_CALLS, default min(BENCH_CALLS, 1,000,000)).
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { startBenchWeft } from './bench-weft';
import { loadBenchCallRange } from './query-data';
import { basicAuth, HARNESS_API_KEY, startSharedClickHouse } from '@weft/harness';

const N = Number(process.env.BENCH_CALLS ?? 1_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const STREAM_N = Number(process.env.BENCH_STREAM_CALLS ?? Math.min(N, 1_000_000));
const P = 'bench/main';
/** The project of ~1 KB calls the full streams read. */
const S = 'bench/stream';
/**
 * BENCH_SERVER=1: the same in server mode, the engine behind ClickHouse's HTTP interface in its
 * own process (tools/harness clickhouse-http-main.ts) on BENCH_DATA_DIR, weft on CLICKHOUSE_URL.
 * The CPU column then adds the engine process's CPU to the bench process's.
 */
const shared =
  process.env.BENCH_SERVER === '1'
    ? await startSharedClickHouse(process.env.BENCH_DATA_DIR ?? mkdtempSync(join(tmpdir(), 'weft-bench-query-server-')))
    : undefined;
if (shared) process.env.CLICKHOUSE_URL = shared.url;
const { weft, url, client, dataDir } = await startBenchWeft('query');
/** CPU time of the engine's own process (server mode), in ms. */
function engineCpuMs(): number {
  if (!shared) return 0;
  const f = readFileSync(`/proc/${shared.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
}

async function scalar(sql: string): Promise<number> {
  const rs = await client.query({ query: sql, format: 'JSONEachRow' });
  const [row] = await rs.json<Record<string, number>>();
  return Number(Object.values(row ?? {})[0] ?? 0);
}

/** Calls: 10 per trace (the first is the root and a turn of one of N/50 threads), 20 ops, a usage on every 4th. */
async function load(project: string, n: number, pad = 0, have = 0): Promise<void> {
  // In chunks of a million calls: bounded insert blocks and a progress line per chunk. A run
  // stopped half-way resumes at its last whole chunk (a chunk loaded twice is a replay: folded).
  const CHUNK = 1_000_000;
  for (let from = Math.floor(have / CHUNK) * CHUNK; from < n; from += CHUNK) {
    const t0 = performance.now();
    await loadBenchCallRange(client, project, from, Math.min(n, from + CHUNK), pad);
    if (n > CHUNK)
      console.log(`  ${project}: calls ${from}..${Math.min(n, from + CHUNK)} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
}

interface RunResult {
  note: string;
  rows?: number;
  /** The run's wall time when it is not the whole of `fn` (first rows: until the first chunk). */
  ms?: number;
}

const mib = (b: number) => (b / 1048576).toFixed(0);

/** BENCH_ONLY: a regular expression; only the queries whose label matches run. */
const ONLY = process.env.BENCH_ONLY ? new RegExp(process.env.BENCH_ONLY) : undefined;

/** Runs `fn` RUNS times (see measure); a query that fails is reported and the others still run. */
async function timed(label: string, fn: () => Promise<RunResult>, runs = RUNS): Promise<void> {
  if (ONLY && !ONLY.test(label)) return;
  try {
    await measure(label, fn, runs);
  } catch (e) {
    console.log(`${label.padEnd(66)} FAILED: ${(e as Error).message.slice(0, 200)}`);
  }
}

/** Runs `fn` `runs` times: median and p95 wall time, the process's peak RSS (and its growth over the run), rows/s for streams. */
async function measure(label: string, fn: () => Promise<RunResult>, runs: number): Promise<void> {
  const times: number[] = [];
  const cpus: number[] = [];
  let result: RunResult = { note: '' };
  let peak = 0;
  let growth = 0;
  let rowsPerSec = 0;
  for (let i = 0; i < runs; i++) {
    const before = process.memoryUsage.rss();
    let top = before;
    const sampler = setInterval(() => (top = Math.max(top, process.memoryUsage.rss())), 10);
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    const e0 = engineCpuMs();
    result = await fn();
    const ms = result.ms ?? performance.now() - t0;
    const cpu = process.cpuUsage(c0);
    cpus.push((cpu.user + cpu.system) / 1000 + engineCpuMs() - e0);
    clearInterval(sampler);
    top = Math.max(top, process.memoryUsage.rss());
    times.push(ms);
    peak = Math.max(peak, top);
    growth = Math.max(growth, top - before);
    if (result.rows) rowsPerSec = Math.max(rowsPerSec, (result.rows / ms) * 1000);
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)]!;
  const p95 = times[Math.min(times.length - 1, Math.ceil(times.length * 0.95) - 1)]!;
  cpus.sort((a, b) => a - b);
  const cpu = cpus[Math.floor(cpus.length / 2)]!;
  const rate = result.rows
    ? `  ${Math.round(rowsPerSec).toLocaleString('en-US')} rows/s (best run), ${Math.round((result.rows / cpu) * 1000).toLocaleString('en-US')} rows per CPU-s`
    : '';
  console.log(
    `${label.padEnd(66)} median ${median.toFixed(0).padStart(6)} ms  p95 ${p95.toFixed(0).padStart(6)} ms  CPU ${cpu.toFixed(0).padStart(6)} ms  peak RSS ${mib(peak)} MiB (+${mib(growth)})${rate}  ${result.note}`,
  );
}

const auth = { authorization: basicAuth(HARNESS_API_KEY), 'content-type': 'application/json' };
const post = (path: string, body: unknown) => fetch(url + path, { method: 'POST', headers: auth, body: JSON.stringify(body) });

/**
 * Time to the first JSONL line, then the stream is cancelled. The embedded engine runs one query
 * at a time and cannot interrupt one already running (a page fetched ahead completes in the
 * background): the run then waits until the engine answers again, outside the timed part, so
 * the next run does not queue behind it (its CPU is still counted in this run's).
 */
async function firstRow(body: unknown): Promise<RunResult> {
  const t0 = performance.now();
  const res = await post('/calls/stream_query', body);
  if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`);
  const reader = res.body!.getReader();
  const { value } = await reader.read();
  const ms = performance.now() - t0;
  await reader.cancel();
  await scalar('SELECT 1');
  return { note: `first chunk ${value?.length ?? 0} bytes`, ms };
}

async function whole(path: string, body: unknown): Promise<RunResult> {
  const res = await post(path, body);
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${res.status} ${text}`);
  const lines = text.split('\n').filter(Boolean);
  return { note: lines.length === 1 ? lines[0]!.slice(0, 80) : `${lines.length} rows` };
}

/**
 * A stream read to the end by a client in its own process (node:http, counting lines and bytes),
 * so the CPU column of a stream is the server's (and its engine's) alone; the client's own CPU is
 * in the note. With `pauseMs`, the client reads one chunk, stops reading for that long (a slow
 * client: the server must not buffer the rest), then hangs up.
 */
const STREAM_CLIENT = `
const http = require('node:http');
const w = JSON.parse(process.argv[1]);
const t0 = performance.now();
const done = (m) => { process.stdout.write(JSON.stringify({ ...m, clientCpuMs: (process.cpuUsage().user + process.cpuUsage().system) / 1000 })); process.exit(0); };
const req = http.request(w.url, { method: 'POST', headers: w.headers }, (res) => {
  if (res.statusCode !== 200) { let t = ''; res.on('data', (c) => (t += c)); res.on('end', () => done({ error: res.statusCode + ' ' + t })); return; }
  let rows = 0, bytes = 0;
  res.on('data', (value) => {
    bytes += value.length;
    for (let i = value.indexOf(10); i >= 0; i = value.indexOf(10, i + 1)) rows++;
    if (w.pauseMs) { res.pause(); setTimeout(() => { req.destroy(); done({ rows, bytes, ms: performance.now() - t0 }); }, w.pauseMs); }
  });
  res.on('end', () => done({ rows, bytes, ms: performance.now() - t0 }));
});
req.on('error', (e) => done({ error: String(e) }));
req.end(w.body);`;

function streamAll(body: unknown, pauseMs = 0): Promise<RunResult & { bytes: number }> {
  const child = spawn(
    process.execPath,
    ['-e', STREAM_CLIENT, JSON.stringify({ url: url + '/calls/stream_query', headers: auth, body: JSON.stringify(body), pauseMs })],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', () => {
      const m = JSON.parse(out || '{"error":"the stream client printed nothing"}') as {
        error?: string;
        rows: number;
        bytes: number;
        clientCpuMs: number;
      };
      if (m.error) return reject(new Error(m.error));
      resolve({
        rows: pauseMs ? undefined : m.rows,
        bytes: m.bytes,
        note: `${m.rows.toLocaleString('en-US')} rows, ${mib(m.bytes)} MiB, ${(m.bytes / Math.max(1, m.rows)).toFixed(0)} B/row, client CPU ${m.clientCpuMs.toFixed(0)} ms`,
      });
    });
  });
}

const countOf = (project: string) => scalar(`SELECT uniqExact(id) FROM calls_starts WHERE project_id = '${project}'`);
/** The neighbour project, so that scoping by project is part of what is measured (N/5, at most 200,000). */
const NEIGHBOUR = Math.min(Math.floor(N / 5), 200_000);
const have = await countOf(P);
if (have < N || (await countOf('bench/other')) < NEIGHBOUR) {
  const t0 = performance.now();
  await load(P, N, 0, have);
  await load('bench/other', NEIGHBOUR, 0, await countOf('bench/other'));
  const s = (performance.now() - t0) / 1000;
  console.log(`loaded ${N} + ${NEIGHBOUR} calls (2 parts each) in ${s.toFixed(1)} s: ${((N - have + NEIGHBOUR) / s).toFixed(0)} calls/s`);
}
if ((await countOf(S)) < STREAM_N) {
  const t0 = performance.now();
  await load(S, STREAM_N, 350);
  console.log(`loaded ${STREAM_N} calls of ~1 KB into ${S} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
if (process.env.BENCH_OPTIMIZE === '1') {
  // The steady state once background merges have caught up: one row per call.
  const t0 = performance.now();
  await client.command({ query: 'OPTIMIZE TABLE calls_starts FINAL' });
  await client.command({ query: 'OPTIMIZE TABLE calls_ends FINAL' });
  console.log(`merged all parts (OPTIMIZE FINAL) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
if (process.env.BENCH_LOAD_ONLY === '1') {
  await weft.close();
  await shared?.stop();
  process.exit(0);
}
const parts = await scalar(`SELECT count() FROM calls_starts`);
console.log(
  `store: ${dataDir}; ${N} calls in ${P}; calls_starts rows (unfolded replays included): ${parts}; runs per query: ${RUNS}; load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);

await timed('stream: first row (default order, no filter)', () => firstRow({ project_id: P }));
await timed('stream: first row (op_name filter + $expr, sort started_at desc)', () =>
  firstRow({
    project_id: P,
    filter: { op_names: ['op-7'] },
    query: { $expr: { $gt: [{ $getField: 'inputs.n' }, { $literal: 500 }] } },
    sort_by: [{ field: 'started_at', direction: 'desc' }],
  }),
);
await timed('stream: one trace by trace_ids (skip index), whole', () =>
  whole('/calls/stream_query', { project_id: P, filter: { trace_ids: [`t-c-${String(Math.floor(N / 20) * 10).padStart(9, '0')}`] } }),
);
await timed('stream: 100 rows sorted on a dotted field (inputs.n desc)', () =>
  whole('/calls/stream_query', { project_id: P, sort_by: [{ field: 'inputs.n', direction: 'desc' }], limit: 100 }),
);
await timed('stream: 100 rows sorted on summary.weave.latency_ms, costs', () =>
  whole('/calls/stream_query', {
    project_id: P,
    sort_by: [{ field: 'summary.weave.latency_ms', direction: 'desc' }],
    limit: 100,
    include_costs: true,
  }),
);
await timed('stream: 100 rows of one op sorted on latency, costs (end-part sort over a filter)', () =>
  whole('/calls/stream_query', {
    project_id: P,
    filter: { op_names: ['op-7'] },
    sort_by: [{ field: 'summary.weave.latency_ms', direction: 'desc' }],
    limit: 100,
    include_costs: true,
  }),
);
await timed('stream: 100 rows of one op sorted on cost (end-part sort over a filter)', () =>
  whole('/calls/stream_query', {
    project_id: P,
    filter: { op_names: ['op-7'] },
    sort_by: [{ field: 'summary.weave.total_cost', direction: 'desc' }],
    limit: 100,
    include_costs: true,
  }),
);
/** What the web UI's calls table asks (services/ui/app/views/calls.tsx): newest first, its columns, costs. */
const UI_PAGE = {
  project_id: P,
  sort_by: [{ field: 'started_at', direction: 'desc' }],
  limit: 100,
  include_costs: true,
  columns: ['id', 'op_name', 'display_name', 'started_at', 'ended_at', 'exception', 'summary', 'svc_user_id', 'trace_id', 'parent_id'],
};
await timed('UI: first page (newest 100, columns, costs)', () => whole('/calls/stream_query', UI_PAGE));
await timed('UI: 100 rows sorted on cost (summary.weave.total_cost desc, priced in the query)', () =>
  whole('/calls/stream_query', { ...UI_PAGE, sort_by: [{ field: 'summary.weave.total_cost', direction: 'desc' }] }),
);
await timed(`UI: scrollbar jump to the middle (offset ${Math.floor(N / 2).toLocaleString('en-US')})`, () =>
  whole('/calls/stream_query', { ...UI_PAGE, offset: Math.floor(N / 2) }),
);
await timed('UI: analytics, /calls/aggregate over the whole project', () => whole('/calls/aggregate', { project_id: P }));
await timed('count: whole project', () => whole('/calls/query_stats', { project_id: P }));
await timed('count: filtered (op_names + $expr on inputs.n + status)', () =>
  whole('/calls/query_stats', {
    project_id: P,
    filter: { op_names: ['op-3', 'op-4'] },
    query: {
      $expr: {
        $and: [
          { $gte: [{ $getField: 'inputs.n' }, { $literal: 250 }] },
          { $eq: [{ $getField: 'summary.weave.status' }, { $literal: 'success' }] },
        ],
      },
    },
  }),
);
await timed('threads: all threads of the project (turn calls only)', () => whole('/threads/stream_query', { project_id: P }));
await timed('threads: top 20 by turn_count after a datetime', () =>
  whole('/threads/stream_query', {
    project_id: P,
    filter: { after_datetime: new Date(Date.UTC(2024, 0, 1) + N * 5).toISOString() },
    sort_by: [{ field: 'turn_count', direction: 'desc' }],
    limit: 20,
  }),
);
await timed('stream: 20,000 rows to the end (op_names filter)', () =>
  streamAll({ project_id: P, filter: { op_names: ['op-1'] }, limit: 20_000 }),
);
await timed(
  `stream: whole ${S} (${STREAM_N.toLocaleString('en-US')} calls, ~1 KB) to the end`,
  () => streamAll({ project_id: S }),
  Math.min(RUNS, 3),
);
await timed(
  `stream: ${S} filtered (op_names, 1 in 20) + columns, to the end`,
  () =>
    streamAll({ project_id: S, filter: { op_names: ['op-1'] }, columns: ['id', 'op_name', 'started_at', 'ended_at', 'inputs', 'output'] }),
  Math.min(RUNS, 3),
);
await timed(`stream: ${S}, a client that reads one chunk, stalls 3 s, hangs up`, () => streamAll({ project_id: S }, 3000), 1);
console.log(
  `load average after the runs: ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);

const closing = performance.now();
await weft.close();
await shared?.stop();
// Said, so that a bench that does not end shows whether its close was where it stopped.
console.log(`closed in ${((performance.now() - closing) / 1000).toFixed(1)} s`);
process.exit(0);
