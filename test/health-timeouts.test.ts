import { connect, type Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { basicAuth, Client } from './helpers/client';
import { startKafkaBroker, type KafkaBroker } from './helpers/kafka-broker';
import { percentile } from '@weft/harness';
import { eventually, pipeline, upsertBatch } from './helpers/pipeline';
import { newDataDir, startWeft, type RunningWeft } from './helpers/server';

// Health probes that answer, and the timeouts of every phase of a request (issue 19).
const running: RunningWeft[] = [];
let broker: KafkaBroker | null = null;
afterAll(async () => {
  await Promise.all(running.map((w) => w.kill()));
  await broker?.stop();
});

const timed = async <T>(f: () => Promise<T>): Promise<{ ms: number; value: T }> => {
  const started = performance.now();
  const value = await f();
  return { ms: performance.now() - started, value };
};

describe('health probes while Kafka dies', () => {
  it('/health answers at once, /ready names Kafka within 3 s of a broker SIGKILL, and writes are refused at once', async () => {
    // This file's own broker: it is killed mid-test, so it cannot be the shared one.
    broker = await startKafkaBroker(newDataDir('health-broker'));
    // A gateway alone (no writer): not paced by the writers, or its first write, never written,
    // would have it refuse every later one (docs/operations.md "Writers behind").
    const gateway = await pipeline(broker.brokers, 'health').startGateway({ WEFT_MAX_WRITER_LAG_MS: '0' });
    running.push(gateway);
    const api = new Client(gateway.url);

    const ready = await fetch(`${gateway.url}/ready`);
    const readyBody = (await ready.json()) as { dependencies: Record<string, { ok: boolean }> };
    expect(ready.status).toBe(200);
    expect(readyBody.dependencies.bus!.ok).toBe(true);
    expect(readyBody.dependencies.store!.ok).toBe(true);
    expect((await api.post('/call/upsert_batch', upsertBatch('acme/health', ['before']))).status).toBe(200);

    await broker.kill();
    const killedAt = performance.now();
    // Liveness keeps answering, every time, within a second.
    const probes = [];
    for (let i = 0; i < 5; i++) {
      const h = await timed(() => fetch(`${gateway.url}/health`));
      probes.push(h);
      expect(h.value.status).toBe(200);
      expect(h.ms).toBeLessThan(1_000);
    }
    // Readiness: 503 naming Kafka within 3 s of the kill.
    let notReady: { status: number; reason: string } | null = null;
    while (!notReady && performance.now() - killedAt < 10_000) {
      const r = await fetch(`${gateway.url}/ready`);
      if (r.status === 503) notReady = { status: r.status, reason: ((await r.json()) as { reason: string }).reason };
      else await r.arrayBuffer();
    }
    const readyAfterMs = performance.now() - killedAt;
    expect(notReady?.reason).toMatch(/bus \(kafka/);
    expect(readyAfterMs).toBeLessThan(3_000);

    // Known down: a write gets its 503 at once (not after the 15 s publish timeout), and it says "not stored".
    // /ready fails on the first failed probe, "known down" needs two in a row: a write sent between
    // them goes to the producer and may end in the publish timeout's "may still be stored" 503.
    await eventually(
      async () => {
        const w = await timed(() => api.post('/call/upsert_batch', upsertBatch('acme/health', [`down-${Date.now()}`])));
        if (w.value.status !== 503) return false;
        expect(Number(w.value.headers.get('retry-after'))).toBeGreaterThan(0);
        if (!/not stored/.test(w.value.body.reason)) return false;
        expect(w.value.body.reason).toMatch(/kafka.*not stored/);
        return w.ms < 1_000;
      },
      40_000,
      'a write refused at once',
    );

    // Back up: readiness and writes recover by themselves.
    await broker.restart();
    await eventually(async () => (await fetch(`${gateway.url}/ready`)).status === 200, 60_000, '/ready 200 again');
    await eventually(
      async () => (await api.post('/call/upsert_batch', upsertBatch('acme/health', [`after-${Date.now()}`]))).status === 200,
      60_000,
      'writes again',
    );
  }, 240_000);
});

/** A raw connection that sends `head`, then what `trickle` says; resolves with when it was closed (ms after opening) and what came back. */
function slowClient(
  port: number,
  head: string,
  trickle: { everyMs: number; byte: string } | null,
): { closed: Promise<{ ms: number; reply: string }>; socket: Socket } {
  const socket = connect(port, '127.0.0.1');
  const opened = performance.now();
  let reply = '';
  let timer: NodeJS.Timeout | undefined;
  socket.on('connect', () => {
    socket.write(head);
    if (trickle) timer = setInterval(() => socket.writable && socket.write(trickle.byte), trickle.everyMs);
  });
  socket.on('data', (d) => (reply += d.toString()));
  const closed = new Promise<{ ms: number; reply: string }>((resolve) => {
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ ms: performance.now() - opened, reply });
    });
  });
  return { closed, socket };
}

describe('timeouts of every phase of a request', () => {
  it('closes slow-body and slow-header connections within their timeouts while normal requests keep their latency', async () => {
    // Not shorter: on a loaded machine a normal client can pause a second or two between its headers and its body.
    const timeouts = { WEFT_HEADERS_TIMEOUT_MS: '4000', WEFT_BODY_IDLE_TIMEOUT_MS: '3000', WEFT_REQUEST_TIMEOUT_MS: '8000' };
    const weft = await startWeft({ env: timeouts });
    running.push(weft);
    const api = new Client(weft.url);
    const latencies = async (n: number) => {
      const ms: number[] = [];
      for (let i = 0; i < n; i++) {
        const r = await timed(() => api.post('/call/upsert_batch', upsertBatch('acme/timeouts', [`c-${Date.now()}-${i}`])));
        expect(r.value.status).toBe(200);
        ms.push(r.ms);
      }
      return ms;
    };
    await latencies(5); // warm-up
    const before = percentile(await latencies(20), 50);

    const head = (length: number) =>
      `POST /call/upsert_batch HTTP/1.1\r\nHost: x\r\nAuthorization: ${basicAuth('test-key')}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n{`;
    // 25 bodies trickling a byte a second (never idle 3 s, so the whole-request deadline ends them),
    // 25 bodies that stall after their first byte, 10 requests whose headers never end.
    const trickling = Array.from({ length: 25 }, () => slowClient(weft.port, head(100_000), { everyMs: 1_000, byte: ' ' }));
    const stalled = Array.from({ length: 25 }, () => slowClient(weft.port, head(100_000), null));
    const slowHeaders = Array.from({ length: 10 }, () =>
      slowClient(weft.port, 'POST /call/start HTTP/1.1\r\nHost: x\r\n', { everyMs: 500, byte: 'X' }),
    );
    const during = percentile(await latencies(20), 50);

    const [t, s, h] = await Promise.all([trickling, stalled, slowHeaders].map((group) => Promise.all(group.map((c) => c.closed))));
    const worst = (xs: { ms: number }[]) => Math.max(...xs.map((x) => x.ms));
    const report = `normal p50 before ${before.toFixed(1)} ms, during ${during.toFixed(1)} ms; closed after (worst): trickling ${worst(t!).toFixed(0)} ms, stalled ${worst(s!).toFixed(0)} ms, slow headers ${worst(h!).toFixed(0)} ms`;
    console.log(report);
    // Deadlines plus Node's 1 s check interval, with headroom for a loaded machine.
    expect(worst(s!), report).toBeLessThan(3_000 + 3_000);
    expect(Math.min(...s!.map((x) => x.ms)), report).toBeGreaterThan(2_900);
    expect(
      s!.every((x) => x.reply.startsWith('HTTP/1.1 408')),
      report,
    ).toBe(true);
    expect(worst(t!), report).toBeLessThan(8_000 + 4_000);
    expect(Math.min(...t!.map((x) => x.ms)), report).toBeGreaterThan(7_900);
    expect(worst(h!), report).toBeLessThan(4_000 + 4_000);
    // Normal requests kept their latency (generously: a shared machine).
    expect(during, report).toBeLessThan(Math.max(3 * before, before + 250));
    // What was cut was logged and counted.
    const metrics = await (await fetch(`${weft.url}/metrics`)).text();
    const bodyTimeouts = Number(/weft_request_timeouts_total\{phase="body"\} (\d+)/.exec(metrics)?.[1]);
    expect(bodyTimeouts).toBeGreaterThanOrEqual(25);
  }, 120_000);

  it('a request past its deadline gets 503, and its late result or abort is not a second reply', async () => {
    // Seed with the default deadline, then restart on the same data with a 100 ms one.
    const dataDir = newDataDir('deadline');
    const project = 'acme/deadline';
    const seeder = await startWeft({ dataDir });
    for (let b = 0; b < 30; b++) {
      const ids = Array.from({ length: 2_000 }, (_, i) => `d-${b}-${i}`);
      expect((await new Client(seeder.url).post('/call/upsert_batch', upsertBatch(project, ids))).status).toBe(200);
    }
    await seeder.kill();
    const weft = await startWeft({ dataDir, env: { WEFT_REQUEST_TIMEOUT_MS: '100' } });
    running.push(weft);
    const api = new Client(weft.url);
    // The analytics of 60,000 calls (three queries) outlast 100 ms; a few tries on a machine fast enough to answer once.
    const statuses: number[] = [];
    for (let i = 0; i < 5 && statuses.at(-1) !== 503; i++) {
      const r = await api.post('/calls/aggregate', { project_id: project });
      statuses.push(r.status);
      if (r.status === 503) expect(r.body.reason).toContain('not answered within 100 ms');
    }
    expect(statuses.at(-1), `statuses ${statuses.join(', ')}`).toBe(503);
    // The handler ends after the 503 went out (its late result, or the query the abort cut short).
    await new Promise((r) => setTimeout(r, 3_000));
    const doubled = weft.logs.filter((l) => /already sent|FST_ERR_REP_ALREADY_SENT/i.test(JSON.stringify(l)));
    expect(doubled).toEqual([]);
    // The server is fine afterwards.
    expect((await fetch(`${weft.url}/health`)).status).toBe(200);
  }, 180_000);

  it('logs a stream the client abandoned: which request, how many rows it got, and why', async () => {
    const weft = await startWeft();
    running.push(weft);
    const api = new Client(weft.url);
    const big = 'y'.repeat(2_000);
    for (let b = 0; b < 4; b++) {
      const ids = Array.from({ length: 1_000 }, (_, i) => `s-${b}-${i}`);
      const body = upsertBatch('acme/streams', ids) as { batch: { req: { start?: { inputs: unknown } } }[] };
      for (const item of body.batch) if (item.req.start) item.req.start.inputs = { big };
      expect((await api.post('/call/upsert_batch', body)).status).toBe(200);
    }
    const controller = new AbortController();
    const res = await fetch(`${weft.url}/calls/stream_query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: basicAuth('test-key') },
      body: JSON.stringify({ project_id: 'acme/streams' }),
      signal: controller.signal,
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    await eventually(
      async () => weft.logs.some((l) => (l as { msg?: string }).msg === 'stream aborted: the client went away'),
      20_000,
      'the abort logged',
    );
    const line = weft.logs.find((l) => (l as { msg?: string }).msg === 'stream aborted: the client went away') as {
      url: string;
      rowsSent: number;
      reason: string;
    };
    expect(line.url).toBe('/calls/stream_query');
    expect(line.reason).toBe('client_gone');
    expect(line.rowsSent).toBeGreaterThan(0);
    expect(line.rowsSent).toBeLessThan(4_000);
  }, 120_000);
});
