/**
 * Analytics benchmark (`npm run bench:analytics`): loads BENCH_CALLS calls (default 10,000,000)
 * spread over 30 days (a start and an end part each; BENCH_PARTS=whole: one whole-call part) into the
 * embedded store of a fresh (or reused: BENCH_DATA_DIR) data dir,
 * then times /analytics/query, /calls/aggregate and /calls/export over real HTTP against the
 * all-in-one server in this process. The data set is bench:query's (query-data.ts): 20 ops, 10
 * calls a trace, a usage on every 4th call, `inputs.model.name` one of 13 values.
 *
 * Each query runs BENCH_RUNS times (default 3): median wall time, the process's CPU time (server
 * and embedded engine), peak RSS growth. The export is read to the end by this process, counting
 * bytes; its rate is calls per second of wall time. Then the Analytics view in Chromium (unless
 * BENCH_BROWSER=0): from navigation until the totals and the six charts of the default dashboard
 * are painted.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { basicAuth, HARNESS_API_KEY, launchBrowser } from '@weft/harness';
import { startBenchWeft } from './bench-weft';
import { loadBenchCallRange } from './query-data';

const N = Number(process.env.BENCH_CALLS ?? 10_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const EXPORT_N = Number(process.env.BENCH_EXPORT_CALLS ?? Math.min(N, 1_000_000));
const DAYS = 30;
const P = 'bench/analytics';
// Each call as a start and an end part (`whole`: one whole-call part, as Weave's calls_complete and OTLP send them).
const PARTS = (process.env.BENCH_PARTS ?? 'split') as 'whole' | 'split';

// Analytics facts are built by a pass of the query role; a short interval so the first pass after loading comes soon.
process.env.WEFT_ANALYTICS_FACTS_INTERVAL_MS ??= '2000';
const { weft, url, client } = await startBenchWeft('analytics');
const auth = { authorization: basicAuth(HARNESS_API_KEY), 'content-type': 'application/json' };
const post = (path: string, body: unknown) => fetch(url + path, { method: 'POST', headers: auth, body: JSON.stringify(body) });

async function scalar(sql: string): Promise<number> {
  const rs = await client.query({ query: sql, format: 'JSONEachRow' });
  const [row] = await rs.json<Record<string, number>>();
  return Number(Object.values(row ?? {})[0] ?? 0);
}

const have = await scalar(`SELECT count() FROM calls_starts WHERE project_id = '${P}'`);
if (have < N) {
  const stepMs = Math.max(1, Math.floor((DAYS * 86_400_000) / N));
  const CHUNK = 1_000_000;
  for (let from = Math.floor(have / CHUNK) * CHUNK; from < N; from += CHUNK) {
    const t0 = performance.now();
    await loadBenchCallRange(client, P, from, Math.min(N, from + CHUNK), 0, stepMs, PARTS);
    console.log(`  loaded calls ${from}..${Math.min(N, from + CHUNK)} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
}
console.log(`loaded ${N} calls over ${DAYS} days into ${P} as ${PARTS} parts; ${cpus().length} cores (${cpus()[0]?.model ?? '?'})`);

const mib = (b: number) => (b / 1048576).toFixed(0);

/** A figure of the server's /metrics (the first sample of that name). */
async function serverMetric(name: string): Promise<number> {
  const text = await (await fetch(url + '/metrics', { headers: auth })).text();
  return Number(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+-]+)`, 'm').exec(text)?.[1] ?? 0);
}

// Analytics facts (docs/analytics.md "How figures stay exact and fast"): the queries below read
// the settled days from them once built; BENCH_FACTS=0 measures without waiting for them.
if (process.env.BENCH_FACTS !== '0') {
  const t0 = performance.now();
  while ((await serverMetric('weft_analytics_facts_days')) < DAYS) await new Promise((r) => setTimeout(r, 250));
  const builds = await serverMetric('weft_analytics_facts_build_seconds_count');
  const spent = await serverMetric('weft_analytics_facts_build_seconds_sum');
  console.log(
    `analytics facts: ${DAYS} days current after ${((performance.now() - t0) / 1000).toFixed(1)} s of waiting; ${builds} build(s), ${spent.toFixed(1)} s building`,
  );
}

async function measure(label: string, fn: () => Promise<string>): Promise<void> {
  const times: number[] = [];
  const cpu: number[] = [];
  let growth = 0;
  let note = '';
  try {
    for (let i = 0; i < RUNS; i++) {
      const before = process.memoryUsage.rss();
      let top = before;
      const sampler = setInterval(() => (top = Math.max(top, process.memoryUsage.rss())), 10);
      const t0 = performance.now();
      const c0 = process.cpuUsage();
      note = await fn();
      times.push(performance.now() - t0);
      const c = process.cpuUsage(c0);
      cpu.push((c.user + c.system) / 1000);
      clearInterval(sampler);
      growth = Math.max(growth, Math.max(top, process.memoryUsage.rss()) - before);
    }
  } catch (e) {
    console.log(`${label.padEnd(70)} FAILED: ${(e as Error).message.slice(0, 300)}`);
    return;
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(
    `${label.padEnd(70)} median ${median(times).toFixed(0).padStart(6)} ms  CPU ${median(cpu).toFixed(0).padStart(6)} ms  RSS +${mib(growth)} MiB  ${note}`,
  );
}

async function json(path: string, body: unknown): Promise<string> {
  const res = await post(path, body);
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${res.status} ${text}`);
  const parsed = JSON.parse(text) as { rows?: unknown[]; truncated?: boolean };
  return parsed.rows ? `${parsed.rows.length} rows${parsed.truncated ? ' (truncated)' : ''}` : `${text.length} bytes`;
}

const from = '2024-01-01T00:00:00Z';
const to = new Date(Date.parse(from) + DAYS * 86_400_000).toISOString();
// The first question: p50/p99 latency and cost per op and day over 30 days.
const OP_BY_DAY = {
  project_id: P,
  dimensions: ['op', 'time'],
  metrics: ['count', 'latency_p50_ms', 'latency_p99_ms', 'cost'],
  from,
  to,
  bucket: 'day',
};
await measure('metrics: by op and day, p50/p99 latency and cost, 30 days', () => json('/analytics/query', OP_BY_DAY));
await measure('metrics: by a dotted path (inputs.model.name), count and p95', () =>
  json('/analytics/query', { project_id: P, dimensions: ['inputs.model.name'], metrics: ['count', 'latency_p95_ms'] }),
);
await measure('metrics: by model, tokens and cost (own usage)', () =>
  json('/analytics/query', { project_id: P, dimensions: ['model'], metrics: ['requests', 'total_tokens', 'cost'] }),
);
await measure('metrics: one op, error rate per hour, 30 days', () =>
  json('/analytics/query', {
    project_id: P,
    dimensions: ['time'],
    metrics: ['count', 'error_rate'],
    filter: { op_names: ['op-3'] },
    bucket: 'hour',
  }),
);
await measure('UI: /calls/aggregate over the whole project', () => json('/calls/aggregate', { project_id: P }));

// The export: read to the end here, its bytes counted (and kept once, to check it is Parquet).
const dir = mkdtempSync(join(tmpdir(), 'weft-bench-export-'));
await measure(`export: ${EXPORT_N.toLocaleString('en-US')} calls as Parquet`, async () => {
  const t0 = performance.now();
  const res = await post('/calls/export', { project_id: P, format: 'parquet', limit: EXPORT_N });
  if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`);
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const c of res.body as AsyncIterable<Uint8Array>) {
    bytes += c.length;
    if (chunks.length < 1) chunks.push(Buffer.from(c));
  }
  writeFileSync(join(dir, 'head.bin'), chunks[0] ?? Buffer.alloc(0));
  if (chunks[0]?.subarray(0, 4).toString() !== 'PAR1') throw new Error('not a Parquet file');
  const s = (performance.now() - t0) / 1000;
  return `${mib(bytes)} MiB, ${Math.round(EXPORT_N / s).toLocaleString('en-US')} calls/s`;
});
await measure(`export: ${EXPORT_N.toLocaleString('en-US')} calls as JSONL`, async () => {
  const t0 = performance.now();
  const res = await post('/calls/export', { project_id: P, format: 'jsonl', limit: EXPORT_N });
  if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`);
  let bytes = 0;
  for await (const c of res.body as AsyncIterable<Uint8Array>) bytes += c.length;
  const s = (performance.now() - t0) / 1000;
  return `${mib(bytes)} MiB, ${Math.round(EXPORT_N / s).toLocaleString('en-US')} calls/s`;
});

async function measureDashboard(label: string): Promise<void> {
  const browser = await launchBrowser();
  const times: number[] = [];
  try {
    // Warm the bundle (built once per server process) so runs measure the view, not esbuild.
    await fetch(url + '/');
    for (let run = 0; run < RUNS; run++) {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      await page.goto(url + '/');
      await page.evaluate(`sessionStorage.setItem('weft.apiKey', ${JSON.stringify(HARNESS_API_KEY)})`);
      const t0 = performance.now();
      await page.goto(`${url}/#/p/${P}/analytics`);
      await page.locator('.stat[data-stat="Calls"]').waitFor({ timeout: 300_000 });
      // Every chart painted (some pixels drawn on each of the six canvases).
      await page.waitForFunction(
        `(() => { const cs = [...document.querySelectorAll('figure.chart canvas')]; return cs.length === 6 && cs.every((c) => {
          const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; let n = 0;
          for (let i = 3; i < px.length; i += 4) if (px[i] > 0) n++; return n > 500; }); })()`,
        undefined,
        { timeout: 300_000, polling: 100 },
      );
      times.push(performance.now() - t0);
      // The view's other requests (its ops table) end before the page goes: none is cut off mid-query.
      await page.waitForLoadState('networkidle');
      await page.close();
    }
  } finally {
    await browser.close();
  }
  const sorted = [...times].sort((a, b) => a - b);
  console.log(
    `${label.padEnd(70)} median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(0).padStart(6)} ms  (min ${sorted[0]!.toFixed(0)}, max ${sorted.at(-1)!.toFixed(0)})`,
  );
}

if (process.env.BENCH_BROWSER !== '0') await measureDashboard('UI: default dashboard (totals and 6 charts painted) in Chromium');
if (process.env.BENCH_FACTS !== '0') {
  // One call written into the middle day: that day is read from the call tables until its next
  // build, which does not come (the build pass stopped), so the figures below include it.
  await weft.components.find((c) => c.name === 'analytics-facts')?.stop?.();
  const mid = new Date(Date.parse(from) + 15 * 86_400_000 + 3_600_000).toISOString();
  const part = (mode: string, req: unknown) => ({ mode, req });
  const res = await post('/call/upsert_batch', {
    batch: [
      part('start', {
        start: { project_id: P, id: 'bench-late', trace_id: 'bench-late', op_name: 'op-1', started_at: mid, inputs: {}, attributes: {} },
      }),
      part('end', { end: { project_id: P, id: 'bench-late', ended_at: mid, summary: {} } }),
    ],
  });
  if (res.status !== 200) throw new Error(`late call: ${res.status} ${await res.text()}`);
  await measure('metrics: by op and day as above, one day changed since its facts', () => json('/analytics/query', OP_BY_DAY));
  if (process.env.BENCH_BROWSER !== '0') await measureDashboard('UI: default dashboard as above, one day changed since its facts');
}

await weft.close();
process.exit(0);
