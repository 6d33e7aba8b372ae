import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { serverEntries } from '../scripts/build';
import { ENGINE_THREAD_POOL_SIZE } from '@weft/core';
import { buildIsFresh, DIST_DIR } from '@weft/core/build-stamp';
import { Client } from './helpers/client';
import { REPO_ROOT } from './helpers/paths';
import { newDataDir, startWeft, type RunningWeft } from './helpers/server';

// The compiled server as production runs it: `npm start` (scripts/start.mjs) builds dist/ when it
// is not a build of the sources as they are, then runs dist/all-in-one.mjs, with neither tsx nor
// esbuild; the image and the charts run dist/<main>.mjs the same way.
const VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const NPM_START = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.start!;
const STAMP = join(DIST_DIR, 'build-stamp.json');
const P = 'acme/compiled';
const running: RunningWeft[] = [];
afterAll(async () => {
  await Promise.all(running.map((w) => w.stop()));
});

async function start(entry: string, env: Record<string, string> = {}): Promise<RunningWeft> {
  const w = await startWeft({ entry, env, dataDir: newDataDir('compiled') });
  running.push(w);
  return w;
}

const builtAt = () => (JSON.parse(readFileSync(STAMP, 'utf8')) as { builtAt: string }).builtAt;

/** The process's command line and its children (an esbuild service would be one). */
function processOf(pid: number): { argv: string[]; children: number[] } {
  const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
  return { argv, children };
}

// Generous time: a build and several server starts on a shared, loaded 2-core machine.
describe('the compiled server', { timeout: 240_000 }, () => {
  it('npm start on a stale build builds first, then serves the API, OTLP and the prebuilt UI from dist/ without tsx or esbuild', async () => {
    // With Node's thread pool sized for the engine (libs/core thread-pool.ts), which the harness gives this start too.
    expect(NPM_START).toBe(`UV_THREADPOOL_SIZE=\${UV_THREADPOOL_SIZE:-${ENGINE_THREAD_POOL_SIZE}} node scripts/start.mjs`);
    // As after a pull: dist/ built from other sources (or none at all, on a fresh clone).
    if (existsSync(STAMP)) writeFileSync(STAMP, JSON.stringify({ sources: 'older sources', builtAt: '2000-01-01T00:00:00.000Z' }));
    expect(buildIsFresh()).toBe(false);

    // One ingest worker thread: span conversion runs in the compiled worker's bundle too.
    const weft = await start('scripts/start.mjs', { WEFT_INGEST_WORKERS: '1' });
    expect(buildIsFresh()).toBe(true);
    expect(weft.logs).toContainEqual(expect.objectContaining({ ingestWorkers: 1 }));
    for (const name of Object.keys(serverEntries)) expect(existsSync(join(DIST_DIR, `${name}.mjs`)), name).toBe(true);

    const health = await fetch(`${weft.url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok', version: VERSION, roles: ['gateway', 'writer', 'query', 'inference'] });

    // The API: a call written and read back.
    const api = new Client(weft.url);
    const id = '0192a0d4-0000-7000-8000-00000000c0de';
    const started = await api.post('/call/start', {
      start: {
        project_id: P,
        id,
        trace_id: 't-compiled',
        op_name: 'compiled',
        started_at: '2024-05-01T12:00:00Z',
        attributes: {},
        inputs: { a: 1 },
      },
    });
    expect(started.status, started.text).toBe(200);
    const [call] = await api.jsonl('/calls/stream_query', { project_id: P, filter: { call_ids: [id] } });
    expect(call).toMatchObject({ id, op_name: 'compiled', inputs: { a: 1 } });

    // OTLP/HTTP: a span becomes a call.
    const traceId = '5af7651916cd43dd8448eb211c80319c';
    const span = {
      traceId,
      spanId: '1000000000000001',
      name: 'compiled span',
      startTimeUnixNano: '1714564800000001000',
      endTimeUnixNano: '1714564800500002000',
    };
    const otlp = await api.raw('/otel/v1/traces', JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [span] }] }] }), {
      project_id: P,
    });
    expect(otlp.status, otlp.text).toBe(200);
    const fromSpan = await api.jsonl('/calls/stream_query', { project_id: P, filter: { trace_ids: [traceId] } });
    expect(fromSpan.map((c: { op_name: string }) => c.op_name)).toEqual(['compiled span']);

    // The UI: the page names the prebuilt entry and stylesheet, served byte for byte from dist/ui/.
    const page = await (await fetch(`${weft.url}/`)).text();
    const manifest = JSON.parse(readFileSync(join(DIST_DIR, 'ui', 'manifest.json'), 'utf8')) as { entry: string; stylesheet: string };
    expect(page).toContain(`src="/ui/${manifest.entry}"`);
    expect(page).toContain(`href="/ui/${manifest.stylesheet}"`);
    for (const file of [manifest.entry, manifest.stylesheet]) {
      const res = await fetch(`${weft.url}/ui/${file}`);
      expect(res.status, file).toBe(200);
      expect(await res.text(), file).toBe(readFileSync(join(DIST_DIR, 'ui', file), 'utf8'));
    }

    // One process, as `npm start` runs it: no tsx loader, and no esbuild service beside it.
    const proc = processOf(weft.proc.pid!);
    expect(proc.argv.slice(1)).toEqual(['scripts/start.mjs']);
    expect(proc.children).toEqual([]);
  });

  it('npm start on a fresh build does not build again', async () => {
    expect(buildIsFresh()).toBe(true);
    const before = builtAt();
    const weft = await start('scripts/start.mjs');
    expect((await fetch(`${weft.url}/health`)).status).toBe(200);
    expect(builtAt()).toBe(before);
    // Stopped as before (Ctrl-C, SIGTERM): the launcher runs the server in its own process.
    expect(await weft.stop()).toBe(0);
  });

  it('the compiled distributed mains each serve their own role', async () => {
    expect(buildIsFresh()).toBe(true);
    for (const role of ['gateway', 'writer', 'query', 'inference'] as const) {
      const w = await start(`dist/${role}.mjs`);
      const health = await fetch(`${w.url}/health`);
      expect(health.status, role).toBe(200);
      expect(await health.json(), role).toMatchObject({ status: 'ok', version: VERSION, roles: [role] });
      expect(await w.stop(), role).toBe(0);
    }
  });

  it('nothing in dist/ imports tsx or esbuild', () => {
    const js = readdirSync(DIST_DIR).filter((f) => f.endsWith('.mjs'));
    expect(js.length).toBeGreaterThan(Object.keys(serverEntries).length);
    for (const f of js)
      expect(readFileSync(join(DIST_DIR, f), 'utf8'), f).not.toMatch(/\bfrom\s*["'](tsx|esbuild)[/"']|import\(\s*["'](tsx|esbuild)[/"']/);
  });
});
