import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createLogger, type Caller } from '@weft/core';
import { addRoute, createHttpServer, defaultRequestLimits, type Authenticator } from '../src/index';

// A write waits for the bus to acknowledge (~30 ms on Kafka) with many requests in flight: what its
// route keeps reachable meanwhile is copied by every scavenge (issue 12: the gateway's scavenges
// halved once the body was let go). Checked with a real collector, on a real server.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const caller: Caller = { userId: 'u', keyId: 'k', isAdmin: false, entities: ['acme'] };
const auth: Authenticator = { authenticate: async () => caller };
let app: FastifyInstance | null = null;
afterEach(async () => {
  await app?.close();
  app = null;
});

describe('a contract route while its handler waits', () => {
  it('keeps neither the parsed body nor the validated one alive', async () => {
    app = await createHttpServer({
      log: createLogger('silent'),
      bodyLimitBytes: 1 << 20,
      version: 'test',
      limits: defaultRequestLimits,
      readiness: {},
    });
    let parsed: WeakRef<object> | null = null;
    let validated: WeakRef<object> | null = null;
    let release!: () => void;
    const acknowledged = new Promise<void>((r) => (release = r));
    // The parsed JSON as the route receives it, before validation copies it.
    app.addHook('preHandler', async (request) => {
      parsed = new WeakRef(request.body as object);
    });
    addRoute(app, auth, 'callUpsertBatch', (body) => {
      validated = new WeakRef(body);
      // Like the gateway's handler: the body's content is taken, then only the wait is returned.
      return acknowledged.then(() => ({ res: [{}] }));
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}/call/upsert_batch`;
    const end = { project_id: 'acme/p', id: 'c1', ended_at: '2026-01-01T00:00:00Z', summary: {}, output: 'x'.repeat(10_000) };
    const answer = fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer test' },
      body: JSON.stringify({ batch: [{ mode: 'end', req: { end } }] }),
    });
    try {
      const deadline = Date.now() + 10_000;
      while (!validated && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      expect(validated).not.toBeNull();
      expect(parsed).not.toBeNull();
      // Collect until both are gone (a few rounds: the request's own turn must end first).
      for (let i = 0; i < 20 && (parsed!.deref() || validated!.deref()); i++) {
        await new Promise((r) => setTimeout(r, 10));
        gc();
      }
      expect(parsed!.deref()).toBeUndefined();
      expect(validated!.deref()).toBeUndefined();
    } finally {
      // Answered either way, so that a failure does not leave the server waiting on close.
      release();
    }
    const res = await answer;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ res: [{}] });
  });
});
