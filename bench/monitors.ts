/**
 * Monitors benchmark (`npm run bench:monitors`): an active Weave Monitor (an LLM judge — the
 * model stand-in, answering at once — and a JSON check) on one op, then calls of that op sent
 * through /call/upsert_batch as an application sends them, two ways:
 *   paced   BENCH_RATE ended calls/s (default 200) for BENCH_SECONDS (default 30): does the
 *           worker keep up? The lag from each call's end to its scores (p50/p99/max, from the
 *           stored feedback's time) and how long after the last call the last score came.
 *   burst   BENCH_BURST calls at once (default 10,000): the worker's capacity, calls scored per
 *           second of the drain, CPU per call, peak RSS growth.
 * The server runs in this process (its CPU and RSS are the bench's, and the stand-in's too), its
 * monitor worker looking every 200 ms.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { basicAuth, endedCallsBatch, HARNESS_API_KEY, publishMonitor, startModelServer } from '@weft/harness';
import { startBenchWeft } from './bench-weft';

const RATE = Number(process.env.BENCH_RATE ?? 200);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const BURST = Number(process.env.BENCH_BURST ?? 10_000);
const JUDGE = 'judge-bench';
const OP = 'answer';

const judge = await startModelServer();
judge.script((body) => (body.messages?.[0]?.content === 'You grade answers.' ? { content: JSON.stringify({ helpful: true }) } : undefined));
const dir = mkdtempSync(join(tmpdir(), 'weft-bench-monitors-'));
const upstreams = join(dir, 'upstreams.json');
writeFileSync(upstreams, JSON.stringify({ upstreams: [{ name: 'judge', base_url: `${judge.url}/vllm/v1`, models: [JUDGE] }] }));
process.env.WEFT_UPSTREAMS_FILE = upstreams;
process.env.WEFT_MONITORS_INTERVAL_MS = '200';
process.env.WEFT_RATE_LIMIT_MAX = '0';
process.env.BENCH_DATA_DIR ??= join(dir, 'data');
const { weft, url, client } = await startBenchWeft('monitors');
const headers = { authorization: basicAuth(HARNESS_API_KEY), 'content-type': 'application/json' };
const post = async (path: string, body: unknown) => {
  const res = await fetch(url + path, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${path} → ${res.status} ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
};
const scalar = async (sql: string) => {
  const rs = await client.query({ query: sql, format: 'JSONEachRow' });
  return Object.values((await rs.json<Record<string, unknown>>())[0] ?? {}).map(Number);
};
console.log(`machine: ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), Node ${process.version}`);

let seq = 0;
/** `n` ended calls of OP, as an application sends them. */
async function sendCalls(project: string, n: number): Promise<void> {
  const ids = Array.from({ length: n }, () => `call-${project.replace('/', '-')}-${seq++}`);
  await post('/call/upsert_batch', endedCallsBatch(project, OP, ids));
}
const activateMonitor = (project: string) => publishMonitor(post, { project, op: OP, judgeModel: JUDGE });

const scoredCalls = async (project: string) =>
  (
    await scalar(`SELECT uniqExact(svc_ref) FROM feedback WHERE project_id = '${project}' AND feedback_type = 'wandb.runnable.helpful'`)
  )[0]!;

async function waitScored(project: string, n: number, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while ((await scoredCalls(project)) < n) {
    if (Date.now() > until) throw new Error(`only ${await scoredCalls(project)} of ${n} calls scored after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** End → score lag of the project's calls (the first feedback time of each call less its end), ms. */
async function lags(project: string): Promise<number[]> {
  return scalar(`SELECT quantileExact(0.5)(lag), quantileExact(0.99)(lag), max(lag) FROM (
      SELECT f.t - toUnixTimestamp64Milli(e.ended_at) AS lag
      FROM (SELECT replaceOne(svc_ref, 'weave:///${project}/call/', '') AS id, min(toUnixTimestamp64Milli(created_at)) AS t
            FROM feedback WHERE project_id = '${project}' GROUP BY id) AS f
      INNER JOIN (SELECT id, ended_at FROM calls_ends WHERE project_id = '${project}') AS e ON e.id = f.id)`);
}

// Paced: RATE calls/s in batches every 100 ms.
{
  const P = 'bench/monitors-paced';
  await activateMonitor(P);
  const total = RATE * SECONDS;
  const perTick = Math.max(1, Math.round(RATE / 10));
  const t0 = performance.now();
  let sent = 0;
  while (sent < total) {
    const n = Math.min(perTick, total - sent);
    await sendCalls(P, n);
    sent += n;
    const due = t0 + (sent / RATE) * 1000;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }
  const sentFor = (performance.now() - t0) / 1000;
  const last = performance.now();
  await waitScored(P, total, 600_000);
  const tail = performance.now() - last;
  const [p50, p99, max] = await lags(P);
  console.log(
    `paced: ${total.toLocaleString('en-US')} calls at ${(total / sentFor).toFixed(0)} calls/s for ${sentFor.toFixed(1)} s: end → scores p50 ${p50} ms, p99 ${p99} ms, max ${max} ms; last scores ${tail.toFixed(0)} ms after the last call`,
  );
}

// Burst: BURST calls, then the drain.
{
  const P = 'bench/monitors-burst';
  await activateMonitor(P);
  const rss0 = process.memoryUsage.rss();
  let top = rss0;
  const sampler = setInterval(() => (top = Math.max(top, process.memoryUsage.rss())), 20);
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  for (let sent = 0; sent < BURST; sent += 1000) await sendCalls(P, Math.min(1000, BURST - sent));
  const sentAt = performance.now();
  await waitScored(P, BURST, 900_000);
  const s = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(c0);
  clearInterval(sampler);
  const judged = judge.requests.filter((r) => r.body.model === JUDGE).length;
  console.log(
    `burst: ${BURST.toLocaleString('en-US')} calls sent in ${((sentAt - t0) / 1000).toFixed(1)} s, all scored after ${s.toFixed(1)} s: ${Math.round(BURST / s).toLocaleString('en-US')} calls/s, CPU ${((cpu.user + cpu.system) / 1000 / BURST).toFixed(2)} ms per call (server, engine and stand-in), peak RSS +${((top - rss0) / 1048576).toFixed(0)} MiB; judge requests so far ${judged}`,
  );
}

await weft.close();
await judge.close();
process.exit(0);
