/**
 * The source files (and packages) one request runs code in: V8's precise coverage of the
 * all-in-one server in this process, taken around each of two requests (after a first one like
 * them, not measured), the files both ran. Routes with a body here: /analytics/query,
 * /call/upsert_batch, /calls/stream_query. Run from a checkout: `npx tsx scripts/request-walk.ts /analytics/query`.
 */
import { Session } from 'node:inspector/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const route = process.argv[2] ?? '/analytics/query';
const root = resolve(process.cwd());
process.env.LOG_LEVEL = 'warn';
const { startBenchWeft } = await import(pathToFileURL(resolve(root, 'bench/bench-weft.ts')).href);
const { basicAuth, HARNESS_API_KEY } = await import('@weft/harness');
const headers = { authorization: basicAuth(HARNESS_API_KEY), 'content-type': 'application/json' };
const P = 'walk/p';
let n = 0;
const batch = () => ({
  batch: Array.from({ length: 3 }, () => {
    const id = `w${n++}`;
    const at = new Date(Date.now() - n * 1000).toISOString();
    return [
      {
        mode: 'start',
        req: { start: { project_id: P, id, trace_id: id, op_name: 'walk', started_at: at, inputs: { q: 'x' }, attributes: {} } },
      },
      { mode: 'end', req: { end: { project_id: P, id, ended_at: at, output: 1, summary: {} } } },
    ];
  }).flat(),
});
const bodies: Record<string, () => unknown> = {
  '/call/upsert_batch': batch,
  '/calls/stream_query': () => ({ project_id: P, limit: 10 }),
  '/analytics/query': () => ({ project_id: P, dimensions: ['op', 'time'], metrics: ['count', 'latency_p50_ms'], bucket: 'day' }),
};
const body = bodies[route];
if (!body) throw new Error(`no request body for ${route}: one of ${Object.keys(bodies).join(', ')}`);
const started = await startBenchWeft('walk');
const send = async () => {
  const r = await fetch(`${started.url}${route}`, { method: 'POST', headers, body: JSON.stringify(body()) });
  await r.text();
  if (r.status !== 200) throw new Error(`${route}: ${r.status}`);
};
await fetch(`${started.url}/call/upsert_batch`, { method: 'POST', headers, body: JSON.stringify(batch()) });
await new Promise((r) => setTimeout(r, 2000));
await send();
await new Promise((r) => setTimeout(r, 2000));
const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
const rootUrl = `${pathToFileURL(root).href}/`;
const sets: Set<string>[] = [];
for (let i = 0; i < 2; i++) {
  await session.post('Profiler.takePreciseCoverage');
  await send();
  // The request's work that goes on after its answer (an ingest batch stored).
  await new Promise((r) => setTimeout(r, 1500));
  const { result } = await session.post('Profiler.takePreciseCoverage');
  const files = new Set<string>();
  for (const script of result) {
    if (!script.url.startsWith(rootUrl) || script.url.includes('/node_modules/')) continue;
    if (script.functions.some((f) => f.functionName !== '' && f.ranges[0]!.count > 0)) files.add(script.url.slice(rootUrl.length));
  }
  sets.push(files);
}
// Both requests' files: a background pass that ran beside one of them is left out.
const files = [...sets[0]!]
  .filter((f) => sets[1]!.has(f))
  .filter((f) => !f.startsWith('bench/') && !f.startsWith('scripts/'))
  .sort();
const packages = new Set(files.map((f) => f.split('/').slice(0, 2).join('/')));
console.log(`${route}: ${files.length} files in ${packages.size} packages (${[...packages].join(', ')})`);
for (const f of files) console.log(`  ${f}`);
await started.weft.close();
process.exit(0);
