import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createLogger } from '@weft/core';
import { createHttpServer, defaultRequestLimits, EventLoopTurns, type RequestLimits } from '../src/index';

// The edge's overload rules on a real HTTP server (our createHttpServer, real sockets), with
// routes of the test's own making where a slow or publishing handler is needed.
const log = createLogger('silent');
let app: FastifyInstance | null = null;
afterEach(async () => {
  await app?.close();
  app = null;
});

async function serve(limits: Partial<RequestLimits>, setup: (app: FastifyInstance) => void, readiness = {}): Promise<string> {
  app = await createHttpServer({
    log,
    bodyLimitBytes: 8 * 1024 * 1024,
    version: 'test',
    limits: { ...defaultRequestLimits, ...limits },
    readiness,
  });
  setup(app);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
}

/** Waits (a loaded machine may take a while) until the admission counts show `requests` in flight. */
async function untilInflight(requests: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (app!.weftAdmission.snapshot().requests < requests) {
    if (Date.now() > deadline) throw new Error(`never ${requests} requests in flight`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const post = (url: string, body: string | Buffer) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

describe('admission before the body is read', () => {
  it('refuses beyond the in-flight body bytes with 503 + Retry-After, frees them when answered, and never handles a refused body', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let handled = 0;
    const url = await serve({ maxInflightBodyBytes: 150_000 }, (a) =>
      a.post('/slow', async () => {
        handled++;
        await gate;
        return { ok: true };
      }),
    );
    const body = Buffer.from(JSON.stringify({ x: 'a'.repeat(100_000) }));
    const first = post(`${url}/slow`, body);
    await untilInflight(1);
    expect(app!.weftAdmission.snapshot().bodyBytes).toBe(body.length);
    // A body small enough to be drained under overload (refused-body.ts OVERLOAD_DRAIN_MAX_BYTES).
    const refused = await post(`${url}/slow`, Buffer.from(JSON.stringify({ x: 'a'.repeat(60_000) })));
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    // The refused body was drained, so the connection stays open.
    expect(refused.headers.get('connection')).not.toBe('close');
    expect(((await refused.json()) as { reason: string }).reason).toMatch(/server busy: \d+ bytes of request bodies in flight; not stored/);
    // A small body still fits.
    const small = post(`${url}/slow`, '{}');
    release();
    expect((await first).status).toBe(200);
    expect((await small).status).toBe(200);
    expect(handled).toBe(2);
    await new Promise((r) => setTimeout(r, 50));
    expect(app!.weftAdmission.snapshot()).toEqual({ requests: 0, bodyBytes: 0, publishBytes: 0 });
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/weft_admission_refused_total\{reason="body_bytes"\} [1-9]/);
  });

  it('refuses publishing routes while the bus is down or its bound would be crossed, and leaves other routes alone', async () => {
    const bus = { pendingBytes: 0, maxPendingBytes: 1_000, down: null as string | null, behind: null as string | null };
    const url = await serve({}, (a) => {
      a.weftAdmission.watchBus({ pressure: () => bus });
      a.post('/write', { config: { publishes: true } }, async () => ({ stored: true }));
      a.post('/read', async () => ({ read: true }));
    });
    expect((await post(`${url}/write`, '{"a":1}')).status).toBe(200);
    bus.down = 'kafka unreachable: connect ECONNREFUSED';
    const down = await post(`${url}/write`, '{"a":1}');
    expect(down.status).toBe(503);
    expect(down.headers.get('retry-after')).toBe('5');
    expect(((await down.json()) as { reason: string }).reason).toMatch(/ingest unavailable \(kafka unreachable.*not stored/);
    expect((await post(`${url}/read`, '{"a":1}')).status).toBe(200);
    bus.down = null;
    bus.pendingBytes = 990;
    const full = await post(`${url}/write`, JSON.stringify({ a: 'x'.repeat(50) }));
    expect(full.status).toBe(503);
    expect(((await full.json()) as { reason: string }).reason).toMatch(/ingest queue full/);
  });

  it('refuses beyond the in-flight request count; probes are never refused', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const url = await serve({ maxInflightRequests: 2 }, (a) => a.post('/slow', async () => (await gate, {})));
    const held = [post(`${url}/slow`, '{}'), post(`${url}/slow`, '{}')];
    await untilInflight(2);
    expect((await post(`${url}/slow`, '{}')).status).toBe(503);
    expect((await fetch(`${url}/health`)).status).toBe(200);
    expect((await fetch(`${url}/metrics`)).status).toBe(200);
    release();
    for (const h of held) expect((await h).status).toBe(200);
  });
});

describe('timeouts and readiness', () => {
  it('answers 503 when a non-streaming route outlives the whole-request deadline', async () => {
    const url = await serve({ requestTimeoutMs: 300 }, (a) =>
      a.post('/stuck', async () => (await new Promise((r) => setTimeout(r, 2_000)), {})),
    );
    const started = performance.now();
    const r = await post(`${url}/stuck`, '{}');
    expect(r.status).toBe(503);
    expect(((await r.json()) as { reason: string }).reason).toMatch(/not answered within 300 ms/);
    expect(performance.now() - started).toBeLessThan(1_500);
  });

  it('/ready checks each dependency under its deadline and names the one down; /health answers regardless', async () => {
    const url = await serve({ readyTimeoutMs: 300 }, () => undefined, {
      store: async () => ({ mode: 'embedded' }),
      bus: () => new Promise<never>(() => undefined), // hangs for ever
    });
    const started = performance.now();
    const r = await fetch(`${url}/ready`);
    expect(r.status).toBe(503);
    const body = (await r.json()) as { reason: string; dependencies: Record<string, { ok: boolean }> };
    expect(body.reason).toBe('not ready: bus (no answer within 300 ms) down');
    expect(body.dependencies.store!.ok).toBe(true);
    expect(performance.now() - started).toBeLessThan(1_500);
    expect(await (await fetch(`${url}/health`)).json()).toMatchObject({ status: 'ok' });
  });

  it('closes a connection whose body stalls, with a 408', async () => {
    const url = new URL(await serve({ bodyIdleTimeoutMs: 300 }, (a) => a.post('/x', async () => ({}))));
    const started = performance.now();
    const reply = await new Promise<string>((resolve) => {
      const req = request({
        host: url.hostname,
        port: url.port,
        method: 'POST',
        path: '/x',
        headers: { 'content-type': 'application/json', 'content-length': '1000' },
      });
      let text = '';
      req.on('response', (res) => {
        text += `${res.statusCode}`;
        res.resume();
      });
      req.on('error', () => resolve(text));
      req.on('close', () => resolve(text));
      req.write('{"a":');
    });
    expect(reply).toBe('408');
    expect(performance.now() - started).toBeLessThan(2_500);
  });
});

describe('event-loop turns', () => {
  it('lets I/O callbacks in between two heavy bodies', async () => {
    const turns = new EventLoopTurns();
    const order: string[] = [];
    const a = turns.next().then(() => {
      order.push('a');
      setTimeout(() => order.push('timer'), 0);
      const until = Date.now() + 5;
      while (Date.now() < until); // a parse's worth of work
    });
    const b = turns.next().then(() => order.push('b'));
    await Promise.all([a, b]);
    // Two plain setImmediate callbacks would run back to back (a, b, timer).
    expect(order).toEqual(['a', 'timer', 'b']);
  });
});
