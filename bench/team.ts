/**
 * A team at once (`npm run bench:team`): BENCH_CALLS calls (default 10,000,000, the bench:query
 * set of ~1 KB calls) in one project, a small project beside it, and a simulated team for
 * BENCH_SECONDS (default 180): 5 people browsing (a calls page, a trace, a count, ~1 request/s
 * each), the default dashboard every 30 s (its five charts in one /analytics/batch, as the UI
 * sends them), the analytics alone timed too, Parquet exports one after another, a
 * search every 10 s, ingest paced at BENCH_INGEST_RATE calls/s (default 5,000) and a
 * write → queryable probe every 2 s. Each class is timed alone first, then under the team load;
 * the whole runs twice in one process: with the lanes, then with one lane (WEFT_LANES=one, how
 * weft ran before lanes) as the control. Reported per class: p50/p99, statuses, and the
 * process's CPU seconds and peak RSS per phase.
 *
 * `--soak` instead: BENCH_SECONDS (default 1800) of ingest at 2,000 calls/s into the small
 * project, a calls page every 2 s, analytics every 10 s on the big project and on the one being
 * written (op × day: today's calls still arriving); interactive, analytics and live analytics
 * p99 per minute, acknowledgement p99, RSS, and the calls stored against the calls acknowledged.
 */
import { loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startBenchWeft } from './bench-weft';
import { loadBenchCallRange } from './query-data';
import { metrics } from '@weft/core';
import { basicAuth, HARNESS_API_KEY } from '@weft/harness';

const N = Number(process.env.BENCH_CALLS ?? 10_000_000);
const SOAK = process.argv.includes('--soak');
const SECONDS = Number(process.env.BENCH_SECONDS ?? (SOAK ? 1800 : 180));
const INGEST_RATE = Number(process.env.BENCH_INGEST_RATE ?? (SOAK ? 2000 : 5000));
/** Calls per ingest request: one every 100 ms makes the rate. */
const INGEST_BATCH = Math.max(1, Math.round(INGEST_RATE / 10));
const BIG = 'bench/main';
/**
 * The small project (the count's, and the one written to): a new one for each run (set below), so
 * that it is small — it holds only what the run writes, where one name kept across runs had grown
 * to 18M calls on a reused data dir, larger than the big project.
 */
let SMALL = 'bench/small';
/** This run's ids differ from an earlier run's on the same data dir (a reused id would be a second start row). */
const RUN = Date.now().toString(36);
const auth = { authorization: basicAuth(HARNESS_API_KEY), 'content-type': 'application/json' };

type Class =
  'page' | 'trace' | 'count' | 'search' | 'analytics' | 'dashboard' | 'live_analytics' | 'export' | 'ingest_ack' | 'write_to_read';
interface Sample {
  ms: number;
  status: number;
}
const quantile = (xs: number[], q: number) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!;
};

class Recorder {
  readonly samples = new Map<Class, Sample[]>();
  add(c: Class, s: Sample) {
    (this.samples.get(c) ?? this.samples.set(c, []).get(c)!).push(s);
  }
  line(c: Class): string {
    const xs = this.samples.get(c) ?? [];
    const ok = xs.filter((s) => s.status === 200).map((s) => s.ms);
    const statuses = [...new Set(xs.map((s) => s.status))].map((st) => `${st}×${xs.filter((s) => s.status === st).length}`).join(' ');
    return `${c.padEnd(14)} n=${String(xs.length).padStart(5)}  p50 ${quantile(ok, 0.5).toFixed(0).padStart(6)} ms  p99 ${quantile(ok, 0.99).toFixed(0).padStart(6)} ms  ${statuses}`;
  }
}

let url = '';
async function post(path: string, body: unknown): Promise<{ status: number; ms: number; json?: any }> {
  const t0 = performance.now();
  const r = await fetch(`${url}${path}`, { method: 'POST', headers: auth, body: JSON.stringify(body) });
  const text = await r.text();
  const ms = performance.now() - t0;
  let json: unknown;
  try {
    json = JSON.parse(text.split('\n')[0] ?? '');
  } catch {
    json = undefined;
  }
  return { status: r.status, ms, json };
}

const REQUESTS: Record<Exclude<Class, 'ingest_ack' | 'write_to_read' | 'export'>, () => unknown> = {
  page: () => ({
    project_id: BIG,
    limit: 100,
    sort_by: [{ field: 'started_at', direction: 'desc' }],
    columns: ['id', 'op_name', 'started_at', 'ended_at'],
  }),
  trace: () => ({ project_id: BIG, filter: { trace_ids: [`t-c-${String(Math.floor(Math.random() * (N / 10)) * 10).padStart(9, '0')}`] } }),
  count: () => ({ project_id: SMALL }),
  search: () => ({
    project_id: BIG,
    limit: 50,
    query: {
      $expr: {
        $or: ['inputs', 'output', 'op_name', 'display_name'].map((f) => ({
          $contains: { input: { $getField: f }, substr: { $literal: `text-${Math.floor(Math.random() * 7919)}` }, case_insensitive: true },
        })),
      },
    },
  }),
  analytics: () => ({
    project_id: BIG,
    dimensions: ['op', 'time'],
    metrics: ['count', 'errors', 'latency_p50_ms', 'latency_p99_ms', 'cost'],
    bucket: 'day',
  }),
  // The default dashboard's five charts over the big project, as the UI sends them (one request).
  dashboard: () => ({
    project_id: BIG,
    queries: [
      { dimensions: ['op', 'time'], metrics: ['count', 'errors', 'latency_p50_ms', 'latency_p99_ms', 'cost'], bucket: 'day' },
      { dimensions: ['time'], metrics: ['count', 'errors'], bucket: 'hour' },
      { dimensions: ['model'], metrics: ['cost', 'total_tokens'] },
      { dimensions: ['op'], metrics: ['latency_p50_ms', 'latency_p99_ms'] },
      { dimensions: [], metrics: ['count', 'errors', 'cost'], totals: true },
    ],
  }),
  // The project being written (soak): op × day over a day its calls are still arriving on.
  live_analytics: () => ({
    project_id: SMALL,
    dimensions: ['op', 'time'],
    metrics: ['count', 'errors', 'latency_p50_ms', 'latency_p99_ms', 'cost'],
    bucket: 'day',
  }),
};
const PATHS = {
  dashboard: '/analytics/batch',
  page: '/calls/stream_query',
  trace: '/calls/stream_query',
  count: '/calls/query_stats',
  search: '/calls/stream_query',
  analytics: '/analytics/query',
  live_analytics: '/analytics/query',
};

async function timed(rec: Recorder, c: keyof typeof REQUESTS): Promise<void> {
  const r = await post(PATHS[c], REQUESTS[c]());
  rec.add(c, { ms: r.ms, status: r.status });
}

async function exportOnce(rec: Recorder): Promise<void> {
  const t0 = performance.now();
  const r = await fetch(`${url}/calls/export`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ project_id: BIG, format: 'parquet', limit: 200_000 }),
  });
  if (r.body) for await (const chunk of r.body) void chunk;
  rec.add('export', { ms: performance.now() - t0, status: r.status });
}

let written = 0;
async function ingestBatch(rec: Recorder, n: number): Promise<void> {
  const now = new Date().toISOString();
  const batch = Array.from({ length: n }, () => {
    const id = `live-${RUN}-${written++}`;
    return [
      {
        mode: 'start',
        req: { start: { project_id: SMALL, id, trace_id: id, op_name: 'live', started_at: now, inputs: { q: 'hello' }, attributes: {} } },
      },
      { mode: 'end', req: { end: { project_id: SMALL, id, ended_at: now, output: { a: 1 }, summary: {} } } },
    ];
  }).flat();
  const r = await post('/call/upsert_batch', { batch });
  rec.add('ingest_ack', { ms: r.ms, status: r.status });
}

async function writeToRead(rec: Recorder): Promise<void> {
  const id = `probe-${RUN}-${written++}`;
  const now = new Date().toISOString();
  const t0 = performance.now();
  const w = await post('/call/upsert_batch', {
    batch: [
      {
        mode: 'start',
        req: { start: { project_id: SMALL, id, trace_id: id, op_name: 'probe', started_at: now, inputs: {}, attributes: {} } },
      },
      { mode: 'end', req: { end: { project_id: SMALL, id, ended_at: now, output: 1, summary: {} } } },
    ],
  });
  if (w.status !== 200) return rec.add('write_to_read', { ms: w.ms, status: w.status });
  for (;;) {
    const r = await post('/calls/query_stats', { project_id: SMALL, filter: { call_ids: [id] } });
    if (r.status !== 200 || r.json?.count === 1) return rec.add('write_to_read', { ms: performance.now() - t0, status: r.status });
    await new Promise((res) => setTimeout(res, 10));
  }
}

/** Runs `work` every `everyMs` until `until`, never two at once. */
async function every(everyMs: number, until: number, work: () => Promise<void>): Promise<void> {
  while (Date.now() < until) {
    const t0 = Date.now();
    await work().catch(() => undefined);
    // Never past the end: a 30 s dashboard period must not stretch the phase.
    await new Promise((r) => setTimeout(r, Math.max(0, Math.min(everyMs - (Date.now() - t0), until - Date.now()))));
  }
}

function usage() {
  const cpu = process.cpuUsage();
  return { cpuS: (cpu.user + cpu.system) / 1e6, rss: process.memoryUsage().rss };
}

/** A histogram's bucket counts by label set (cumulative, as prom-client keeps them). */
type Buckets = Map<string, Map<number, number>>;
async function bucketsOf(
  h: { get(): Promise<{ values: { labels: Record<string, string | number>; value: number; metricName?: string }[] }> },
  by: string,
): Promise<Buckets> {
  const out: Buckets = new Map();
  for (const v of (await h.get()).values) {
    if (!v.metricName?.endsWith('_bucket')) continue;
    const key = String(v.labels[by]);
    const le = v.labels.le === '+Inf' ? Infinity : Number(v.labels.le);
    (out.get(key) ?? out.set(key, new Map()).get(key)!).set(le, v.value);
  }
  return out;
}
/** Per label: how many in the phase, and how many took over 1 s (from the bucket counts' difference). */
/** weft_lane_yield_total by `lane/yielded`. */
async function yieldCounts(): Promise<Map<string, number>> {
  return new Map((await metrics.laneYielded.get()).values.map((v) => [`${v.labels.lane}/${v.labels.yielded}`, v.value]));
}

function slowOver1s(before: Buckets, after: Buckets): { key: string; n: number; slow: number }[] {
  const rows = [];
  for (const [key, b] of after) {
    const was = before.get(key) ?? new Map<number, number>();
    const diff = (le: number) => (b.get(le) ?? 0) - (was.get(le) ?? 0);
    const n = diff(Infinity);
    const under1 = Math.max(...[...b.keys()].filter((le) => le <= 1).map(diff), 0);
    if (n > 0) rows.push({ key, n, slow: n - under1 });
  }
  return rows.sort((x, y) => y.slow - x.slow);
}

async function phase(label: string, run: (rec: Recorder) => Promise<void>): Promise<Recorder> {
  const rec = new Recorder();
  const waitsBefore = await bucketsOf(metrics.laneWaitSeconds, 'lane');
  const yieldsBefore = await yieldCounts();
  const statementsBefore = await bucketsOf(metrics.storeStatementSeconds, 'statement');
  const before = usage();
  // The process's event loop (weft runs in this process): a stall there delays every request.
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  let peak = before.rss;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 500);
  const t0 = performance.now();
  await run(rec);
  clearInterval(sampler);
  const after = usage();
  console.log(
    `\n## ${label} — ${((performance.now() - t0) / 1000).toFixed(0)} s, CPU ${(after.cpuS - before.cpuS).toFixed(1)} s, peak RSS ${(peak / 2 ** 20).toFixed(0)} MiB`,
  );
  for (const c of rec.samples.keys()) console.log(`  ${rec.line(c)}`);
  loop.disable();
  console.log(`  event loop delay: p99 ${(loop.percentile(99) / 1e6).toFixed(0)} ms, max ${(loop.max / 1e6).toFixed(0)} ms`);
  // How often heavy and background statements ran at their lane's nice value (someone to yield to).
  const yields = await yieldCounts();
  console.log(
    `  statements at their lane's nice value: ${['heavy', 'background']
      .map((lane) => {
        const at = (yields.get(`${lane}/yes`) ?? 0) - (yieldsBefore.get(`${lane}/yes`) ?? 0);
        const not = (yields.get(`${lane}/no`) ?? 0) - (yieldsBefore.get(`${lane}/no`) ?? 0);
        return `${lane} ${at} of ${at + not}`;
      })
      .join(', ')}`,
  );
  // Where the time went: a lane's wait for a connection, or statements that ran long.
  const waits = slowOver1s(waitsBefore, await bucketsOf(metrics.laneWaitSeconds, 'lane'));
  console.log(`  lane waits over 1 s: ${waits.map((w) => `${w.key} ${w.slow} of ${w.n}`).join(', ')}`);
  const slow = slowOver1s(statementsBefore, await bucketsOf(metrics.storeStatementSeconds, 'statement')).filter((x) => x.slow > 0);
  console.log(
    `  statements over 1 s: ${
      slow
        .slice(0, 8)
        .map((w) => `${w.key} ${w.slow} of ${w.n}`)
        .join(', ') || 'none'
    }`,
  );
  return rec;
}

async function alone(): Promise<void> {
  await phase('each class alone', async (rec) => {
    for (const c of ['page', 'trace', 'count', 'search', 'analytics', 'dashboard'] as const)
      for (let i = 0; i < (c === 'analytics' || c === 'dashboard' ? 5 : 20); i++) await timed(rec, c);
    for (let i = 0; i < 10; i++) await writeToRead(rec);
    await exportOnce(rec);
  });
}

async function team(): Promise<void> {
  await phase(`team for ${SECONDS} s (5 people, dashboard/30 s, exports, search/10 s, ingest ${INGEST_RATE}/s)`, async (rec) => {
    const until = Date.now() + SECONDS * 1000;
    // Five people, each on their own second (person i starts i × 200 ms in): not five clicks in lockstep.
    const people = Array.from({ length: 5 }, async (_, i) => {
      await new Promise((r) => setTimeout(r, i * 200));
      await every(1000, until, () => timed(rec, (['page', 'trace', 'count'] as const)[i % 3]!));
    });
    // As the UI's dashboard asks: its charts' queries in one /analytics/batch.
    const dashboard = every(30_000, until, () => timed(rec, 'dashboard'));
    const exports = every(0, until, () => exportOnce(rec));
    const search = every(10_000, until, () => timed(rec, 'search'));
    const ingest = every(100, until, () => ingestBatch(rec, INGEST_BATCH));
    const probe = every(2000, until, () => writeToRead(rec));
    await Promise.all([...people, dashboard, exports, search, ingest, probe]);
  });
}

async function soak(): Promise<void> {
  const minutes: Recorder[] = [];
  const until = Date.now() + SECONDS * 1000;
  await phase(`soak for ${SECONDS} s (ingest ${INGEST_RATE}/s, a calls page every 2 s, analytics every 10 s)`, async (rec) => {
    const current = () =>
      minutes[Math.floor((SECONDS * 1000 - (until - Date.now())) / 60_000)] ?? (minutes.push(new Recorder()), minutes.at(-1)!);
    const both = (c: Parameters<typeof timed>[1]) => async () => {
      const m = current();
      await timed(m, c);
      rec.add(c, m.samples.get(c)!.at(-1)!);
    };
    await Promise.all([
      every(2000, until, both('page')),
      every(10_000, until, both('analytics')),
      every(10_000, until, both('live_analytics')),
      every(100, until, async () => {
        const m = current();
        await ingestBatch(m, INGEST_BATCH);
        rec.add('ingest_ack', m.samples.get('ingest_ack')!.at(-1)!);
      }),
    ]);
  });
  console.log('\n  minute  page p99  analytics p99  live analytics p99  ack p99');
  minutes.forEach((m, i) => {
    const p = (c: Class) =>
      quantile(
        (m.samples.get(c) ?? []).map((s) => s.ms),
        0.99,
      )
        .toFixed(0)
        .padStart(8);
    console.log(`  ${String(i + 1).padStart(6)} ${p('page')}      ${p('analytics')}           ${p('live_analytics')} ${p('ingest_ack')}`);
  });
  const acked =
    [...minutes].reduce((n, m) => n + (m.samples.get('ingest_ack') ?? []).filter((s) => s.status === 200).length, 0) * INGEST_BATCH;
  const stored = // This run's calls only (a reused data dir holds earlier runs' too).
    (
      await post('/calls/query_stats', {
        project_id: SMALL,
        query: { $expr: { $contains: { input: { $getField: 'id' }, substr: { $literal: `live-${RUN}-` } } } },
      })
    ).json?.count;
  console.log(`  acknowledged ${acked} calls, stored ${stored}`);
}

console.log(`# bench:team — ${N} calls, ${SOAK ? 'soak' : 'team'} ${SECONDS} s, load average before ${loadavg()[0]!.toFixed(2)}`);
// BENCH_LANES=separate|one: that run alone (e.g. again once the facts are built).
for (const lanes of SOAK ? ['separate'] : process.env.BENCH_LANES ? [process.env.BENCH_LANES] : ['separate', 'one']) {
  process.env.WEFT_LANES = lanes;
  SMALL = `bench/small-${RUN}-${lanes}`;
  const started = await startBenchWeft('team');
  url = started.url;
  const have = Number(
    (
      await (
        await started.client.query({ query: `SELECT count() AS c FROM calls_starts WHERE project_id = '${BIG}'`, format: 'JSONEachRow' })
      ).json<{ c: number }>()
    )[0]?.c ?? 0,
  );
  for (let from = Math.floor(have / 1_000_000) * 1_000_000; from < N; from += 1_000_000) {
    const t0 = performance.now();
    await loadBenchCallRange(started.client, BIG, from, Math.min(N, from + 1_000_000), 350);
    console.log(`  loaded calls ${from}..${Math.min(N, from + 1_000_000)} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
  if (have < N) process.env.BENCH_DATA_DIR ??= started.dataDir;
  console.log(`\n# WEFT_LANES=${lanes}`);
  if (SOAK) await soak();
  else {
    await alone();
    await team();
  }
  await started.weft.close();
}
