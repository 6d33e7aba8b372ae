/**
 * Where a long stream's memory goes (issue 18: RSS growth while streaming 1M rows): the
 * all-in-one in this process streams `bench/stream` (~1 KB calls, loaded if missing) to a client
 * in its own process, and every 200 ms this samples the process's RSS, Node's heap and
 * off-heap buffers, the embedded engine's tracked memory (system.metrics MemoryTracking) and its
 * allocator (system.jemalloc_stats: allocated, resident, and dirty pages freed but not yet given
 * back). Prints each share's growth at the RSS peak and after the stream.
 *
 * Env: BENCH_STREAM_CALLS (1,000,000), BENCH_DATA_DIR (reuse a loaded data set), BENCH_PAGE_ROWS,
 * BENCH_PURGE=1 (the sampler also has the engine hand its freed pages back every 200 ms,
 * `SYSTEM JEMALLOC PURGE`: what the growth is made of, and what flattening it costs).
 */
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { basicAuth, HARNESS_API_KEY } from '@weft/harness';
import { startBenchWeft } from './bench-weft';
import { loadBenchCallRange } from './query-data';

const N = Number(process.env.BENCH_STREAM_CALLS ?? 1_000_000);
const S = 'bench/stream';
if (process.env.BENCH_PAGE_ROWS) process.env.WEFT_QUERY_PAGE_ROWS = process.env.BENCH_PAGE_ROWS;
const { weft, url, client } = await startBenchWeft('stream-memory');
const MiB = 1048576;

async function rows<T>(sql: string): Promise<T[]> {
  const rs = await client.query({ query: sql, format: 'JSONEachRow' });
  return rs.json<T>();
}

const have = Number((await rows<{ n: string }>(`SELECT uniqExact(id) AS n FROM calls_starts WHERE project_id = '${S}'`))[0]!.n);
if (have < N) {
  const t0 = performance.now();
  for (let from = have; from < N; from += 500_000) await loadBenchCallRange(client, S, from, Math.min(N, from + 500_000), 350);
  console.log(`loaded ${N - have} calls of ~1 KB into ${S} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

interface Sample {
  rss: number;
  heap: number;
  external: number;
  tracked: number;
  allocated: number;
  resident: number;
  dirty: number;
}

/** The engine's allocator figures from jemalloc's text report (bytes). */
async function engineMemory(): Promise<Pick<Sample, 'tracked' | 'allocated' | 'resident' | 'dirty'>> {
  const [tracked] = await rows<{ value: string }>(`SELECT value FROM system.metrics WHERE metric = 'MemoryTracking'`);
  const [{ stats }] = (await rows<{ stats: string }>(`SELECT * FROM system.jemalloc_stats`).then((r) =>
    r.map((x) => ({ stats: Object.values(x as Record<string, string>)[0]! })),
  )) as [{ stats: string }];
  const num = (re: RegExp) => Number(re.exec(stats)?.[1] ?? NaN);
  // The merged arenas' decay line: "dirty: <decay ms> <pages> …" (pages of 4 KiB freed and not yet given back).
  const dirtyPages = Number(/^\s*dirty:\s+\S+\s+(\d+)/m.exec(stats)?.[1] ?? NaN);
  return {
    tracked: Number(tracked?.value ?? NaN),
    allocated: num(/Allocated: (\d+)/),
    resident: num(/resident: (\d+)/),
    dirty: dirtyPages * 4096,
  };
}

async function sample(): Promise<Sample> {
  const m = process.memoryUsage();
  return { rss: m.rss, heap: m.heapUsed, external: m.external + m.arrayBuffers, ...(await engineMemory()) };
}

const CLIENT = `
const http = require('node:http');
const w = JSON.parse(process.argv[1]);
const req = http.request(w.url, { method: 'POST', headers: w.headers }, (res) => {
  let rows = 0;
  res.on('data', (v) => { for (let i = v.indexOf(10); i >= 0; i = v.indexOf(10, i + 1)) rows++; });
  res.on('end', () => { process.stdout.write(String(rows)); process.exit(0); });
});
req.end(w.body);`;

const fmt = (b: number) => `${b >= 0 ? '+' : ''}${(b / MiB).toFixed(0)}`;
const headers = { authorization: basicAuth(HARNESS_API_KEY), 'content-type': 'application/json' };
for (let run = 1; run <= 2; run++) {
  const before = await sample();
  let peak = before;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      if (process.env.BENCH_PURGE === '1') await client.command({ query: 'SYSTEM JEMALLOC PURGE' });
      const s = await sample();
      if (s.rss > peak.rss) peak = s;
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  const t0 = performance.now();
  const child = spawn(
    process.execPath,
    ['-e', CLIENT, JSON.stringify({ url: `${url}/calls/stream_query`, headers, body: JSON.stringify({ project_id: S }) })],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  await new Promise((r) => child.once('close', r));
  const ms = performance.now() - t0;
  sampling = false;
  await sampler;
  const after = await sample();
  const line = (label: string, s: Sample) =>
    `${label}: RSS ${fmt(s.rss - before.rss)} MiB = Node heap ${fmt(s.heap - before.heap)}, Node buffers ${fmt(s.external - before.external)}, engine tracked ${fmt(s.tracked - before.tracked)} (jemalloc allocated ${fmt(s.allocated - before.allocated)}, resident ${fmt(s.resident - before.resident)}, dirty ${fmt(s.dirty - before.dirty)})`;
  console.log(
    `run ${run}: ${Number(out).toLocaleString('en-US')} rows in ${ms.toFixed(0)} ms (${((Number(out) / ms) * 1000).toFixed(0)} rows/s); load ${loadavg()[0]!.toFixed(1)}`,
  );
  console.log(`  ${line('at the RSS peak', peak)}`);
  console.log(`  ${line('after the stream', after)}`);
  await new Promise((r) => setTimeout(r, 6_000));
  console.log(`  ${line('6 s later (jemalloc dirty_decay_ms = 5000)', await sample())}`);
}
await weft.close();
