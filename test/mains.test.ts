import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { bearerAuth, Client } from './helpers/client';
import { REPO_ROOT } from './helpers/paths';
import { newDataDir, startWeft, type RunningWeft } from './helpers/server';

// Each service's own main, started as a process of its own (embedded store, in-process bus:
// the topology on Kafka is in kafka-mains.test.ts). One composition root builds them all, so
// /health, /ready and the version are the same everywhere; each serves only its own routes.
const exec = promisify(execFile);
const VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const running: RunningWeft[] = [];
afterAll(async () => {
  await Promise.all(running.map((w) => w.stop()));
});

async function start(service: string, env: Record<string, string> = {}, dataDir?: string): Promise<RunningWeft> {
  const w = await startWeft({ entry: `services/${service}/src/main.ts`, env, dataDir });
  running.push(w);
  return w;
}

async function getJson(url: string): Promise<{ status: number; body: any }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.json() };
}

async function migrateWithCli(dataDir: string): Promise<{ applied: number[]; schema_version: number }> {
  const r = await exec(process.execPath, [join(REPO_ROOT, 'services/cli/bin/weft.mjs'), 'migrate'], {
    cwd: REPO_ROOT,
    env: { ...process.env, WEFT_DATA_DIR: dataDir },
    timeout: 90_000,
  });
  return JSON.parse(r.stdout);
}

// Generous time: each test starts processes (and the CLI) on a shared, loaded 2-core machine.
describe('service mains', { timeout: 240_000 }, () => {
  it('query: waits for `weft migrate`, serves the read side only, same /health and /ready', async () => {
    const dataDir = newDataDir('main-query');
    const migrated = await migrateWithCli(dataDir);
    expect(migrated.applied.length).toBeGreaterThan(0);
    expect(migrated.applied.at(-1)).toBe(migrated.schema_version);
    // A second run applies nothing: migrations run once.
    expect((await migrateWithCli(dataDir)).applied).toEqual([]);

    const query = await start('query', { WEFT_MIGRATE: 'wait' }, dataDir);
    expect((await getJson(`${query.url}/health`)).body).toEqual({ status: 'ok', version: VERSION, roles: ['query'], store: 'embedded' });
    const ready = await getJson(`${query.url}/ready`);
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ status: 'ready', dependencies: { store: { ok: true, mode: 'embedded' } } });
    expect(Object.keys(ready.body.dependencies)).toEqual(['store']);
    const api = new Client(query.url);
    expect((await api.post('/calls/query_stats', { project_id: 'acme/p' })).body).toEqual({ count: 0 });
    expect((await api.post('/call/start', {})).status).toBe(404);
    expect((await getJson(`${query.url}/server_info`)).body.trace_server_version).toBe(VERSION);
  });

  it('a process that waits for migrations that never come fails its start, naming `weft migrate`', async () => {
    await expect(start('query', { WEFT_MIGRATE: 'wait', WEFT_MIGRATE_WAIT_MS: '1000' })).rejects.toThrow(
      /exited with 1[\s\S]*weft migrate/,
    );
  });

  it('writer: the store is its dependency (and Kafka, when the bus is Kafka); it serves no interface route', async () => {
    const writer = await start('writer');
    expect((await getJson(`${writer.url}/health`)).body).toEqual({
      status: 'ok',
      version: VERSION,
      roles: ['writer'],
      store: 'embedded',
      bus: 'inprocess',
    });
    const ready = await getJson(`${writer.url}/ready`);
    expect(ready.status).toBe(200);
    // The in-process bus is this process, not a dependency (Kafka's is: test/kafka-mains.test.ts).
    expect(Object.keys(ready.body.dependencies)).toEqual(['store']);
    expect((await new Client(writer.url).post('/calls/query_stats', { project_id: 'acme/p' })).status).toBe(404);
    expect((await fetch(`${writer.url}/metrics`)).status).toBe(200);
  });

  it('inference: completions and model records only', async () => {
    const inference = await start('inference');
    expect((await getJson(`${inference.url}/health`)).body).toMatchObject({ status: 'ok', version: VERSION, roles: ['inference'] });
    expect((await getJson(`${inference.url}/ready`)).status).toBe(200);
    const api = new Client(inference.url, bearerAuth('test-key'));
    const unknownModel = await api.post('/v1/chat/completions', { model: 'nobody/none', messages: [{ role: 'user', content: 'hi' }] });
    expect(unknownModel.status).toBe(404);
    expect(unknownModel.body.error.message).toMatch(/model/i);
    expect((await api.post('/obj/create', {})).status).toBe(404);
    const stopped = await inference.stop();
    expect(stopped).toBe(0);
  });
});
