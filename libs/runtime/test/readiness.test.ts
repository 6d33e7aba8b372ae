import { mkdtempSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkReadiness } from '@weft/http';
import { openStore, type Store } from '@weft/store';
import { storeProbe } from '../src/store';
import { TEST_ROOT } from '@weft/harness';

// Real stores: the embedded engine, a port nobody listens on, and a server that accepts
// connections and never answers (a hung ClickHouse).
const opened: Store[] = [];
const sockets: Socket[] = [];
let silent: Server | null = null;
afterAll(async () => {
  for (const s of sockets) s.destroy();
  silent?.close();
  await Promise.all(opened.map((s) => s.close()));
});

let embedded: Store | null = null;
/** A server store at `url`, or the embedded one (chDB allows one session per process: shared). */
function store(url?: string): Store {
  if (!url && embedded) return embedded;
  const s = openStore({ url, dataDir: mkdtempSync(join(TEST_ROOT, 'ready-')) });
  opened.push(s);
  if (!url) embedded = s;
  return s;
}

async function silentServer(): Promise<string> {
  silent = createServer((socket) => void sockets.push(socket));
  await new Promise<void>((r) => silent!.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
}

async function closedPort(): Promise<string> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return `http://127.0.0.1:${port}`;
}

describe('readiness', () => {
  it('is ready when every dependency answers', async () => {
    const r = await checkReadiness({ store: storeProbe(store()) }, 5000);
    expect(r.ready).toBe(true);
    expect(r.dependencies.store).toMatchObject({ ok: true, mode: 'embedded' });
  });

  it('names the dependency that is down and why, and still reports the others', async () => {
    const r = await checkReadiness({ store: storeProbe(store()), analytics: storeProbe(store(await closedPort())) }, 5000);
    expect(r.ready).toBe(false);
    expect(r.dependencies.store?.ok).toBe(true);
    expect(r.dependencies.analytics).toMatchObject({ ok: false, reason: expect.stringMatching(/ECONNREFUSED|connect/) });
  });

  it('gives up on a dependency that does not answer at its deadline', async () => {
    const started = performance.now();
    const r = await checkReadiness({ store: storeProbe(store(await silentServer())) }, 300);
    expect(r.ready).toBe(false);
    expect(r.dependencies.store?.reason).toBe('no answer within 300 ms');
    // Generous bound (shared 2-core machine); without the deadline the client waits minutes.
    expect(performance.now() - started).toBeLessThan(5000);
  });
});
