import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSharedClickHouse } from '@weft/harness';
import { Client } from './helpers/client';
import { weftCli } from './helpers/cli';
import { clientFor, createKey, type TestKey } from './helpers/keys';
import { newDataDir, startWeft, type RunningWeft } from './helpers/server';
import { runWeaveScript } from './helpers/weave-sdk';

/**
 * Alerts (docs/alerts.md): AlertSpecs — published with the real Weave SDK 0.54 or over
 * /obj/create — evaluated by weft's alert worker, their transitions delivered to a real HTTP
 * receiver on 127.0.0.1 (JSON signed with the channel's secret, or Slack's body), with the
 * outbox surviving a receiver that is down and a SIGKILL, one delivery with two processes on
 * one store, and tenancy.
 */
const INTERVAL_MS = 1500;
/** What a test waits for a pass to have happened at most (the suite's load can delay the background lane); "within two intervals" is asserted where it is the point. */
const EVENTUALLY_MS = 20_000;
/** The receivers listen on 127.0.0.1: a loopback address, refused unless allowed (docs/alerts.md, "Channel URLs"). */
const RECEIVERS = '127.0.0.1';
const SECRET = 'receiver-secret';

/** A webhook receiver: records what it gets; `down()` stops listening (connections refused), `up()` listens again on the same port. */
class Receiver {
  readonly got: { headers: IncomingHttpHeaders; body: string; json: any; at: number }[] = [];
  private server: Server | null = null;
  private sockets = new Set<Socket>();
  port = 0;

  async up(): Promise<void> {
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        this.got.push({ headers: req.headers, body, json: JSON.parse(body), at: Date.now() });
        res.end('ok');
      });
    });
    server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  async down(): Promise<void> {
    const s = this.server;
    this.server = null;
    if (!s) return;
    for (const sock of this.sockets) sock.destroy();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  /** The JSON bodies received for a project (and alert), in order. */
  of(project: string, alert?: string): any[] {
    return this.got.map((g) => g.json).filter((j) => j.project_id === project && (alert === undefined || j.alert === alert));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The last start time handed out (ms): every call starts later than the one before, so "the last n calls" is one set. */
let lastStartMs = 0;

/** /call/upsert_batch body: calls of `op` that ended now (after `latencyMs`), each with its output or its exception. */
function callsBatch(
  project: string,
  op: string,
  calls: { output?: unknown; error?: boolean; latencyMs?: number; summary?: Record<string, unknown>; endedAgoMs?: number }[],
) {
  const batch: unknown[] = [];
  for (const c of calls) {
    const id = crypto.randomUUID();
    const latency = c.latencyMs ?? 5;
    const start =
      c.endedAgoMs !== undefined ? Date.now() - c.endedAgoMs - latency : (lastStartMs = Math.max(Date.now() - latency, lastStartMs + 1));
    batch.push({
      mode: 'start',
      req: {
        start: {
          project_id: project,
          id,
          trace_id: id,
          op_name: op,
          started_at: new Date(start).toISOString(),
          inputs: {},
          attributes: {},
        },
      },
    });
    batch.push({
      mode: 'end',
      req: {
        end: {
          project_id: project,
          id,
          ended_at: new Date(start + latency).toISOString(),
          output: c.output ?? null,
          summary: c.summary ?? {},
          ...(c.error ? { exception: JSON.stringify({ type: 'ValueError', message: 'boom' }) } : {}),
        },
      },
    });
  }
  return { batch };
}

/** An AlertSpec as the SDK stores it, over /obj/create. */
function alertSpecVal(name: string, spec: Record<string, unknown>, opScope?: string[]) {
  return {
    _type: 'AlertSpec',
    name,
    description: null,
    op_scope: opScope ?? null,
    spec: { alert_condition: 'THRESHOLD', source_type: 'calls', ...spec },
    _class_name: 'AlertSpec',
    _bases: ['BaseObject', 'BaseModel'],
  };
}

/** Each alert of project `p` by name with its figure, once every one has a figure (the worker has measured them all). */
async function everyFigure(p: string): Promise<Record<string, number>> {
  const figures = async () =>
    Object.fromEntries(((await post(api, '/alerts/list', { project_id: p })).alerts as any[]).map((a) => [a.alert, a.value]));
  await expect
    .poll(async () => Object.values(await figures()).every((v) => v !== null), { timeout: EVENTUALLY_MS, interval: 200 })
    .toBe(true);
  return figures();
}

const E = 'alrt';
let weft: RunningWeft;
let admin: Client;
let key: TestKey;
let api: Client;
const receiver = new Receiver();

async function post(client: Client, path: string, body: unknown): Promise<any> {
  const r = await client.post(path, body);
  if (r.status !== 200) throw new Error(`${path} → ${r.status} ${r.text}`);
  return r.body;
}

beforeAll(async () => {
  await receiver.up();
  weft = await startWeft({
    dataDir: newDataDir('alerts'),
    env: {
      WEFT_ALERTS_INTERVAL_MS: String(INTERVAL_MS),
      WEFT_MONITORS_INTERVAL_MS: '300',
      WEFT_RATE_LIMIT_MAX: '0',
      WEFT_ALERTS_ALLOW_PRIVATE_URLS: RECEIVERS,
    },
  });
  admin = new Client(weft.url);
  expect((await admin.post('/admin/entities/create', { name: E })).status).toBe(200);
  key = await createKey(admin, 'alrt-alice', [E]);
  api = clientFor(admin, key);
}, 180_000);
afterAll(async () => {
  await weft?.stop();
  await receiver.down();
});

describe('alerts evaluated by weft', () => {
  it('an AlertSpec from the Weave SDK: one firing webhook within two intervals, exact, signed; no flapping on the threshold; one resolved', async () => {
    const P = `${E}/sdk`;
    const channel = await post(api, '/alerts/channels/create', {
      project_id: P,
      name: 'ops',
      url: receiver.url,
      format: 'json',
      secret: SECRET,
    });
    expect(channel).toMatchObject({ project_id: P, name: 'ops', format: 'json', has_secret: true });
    expect(JSON.stringify(channel)).not.toContain(SECRET);
    const run = <T>(args: string[]) => runWeaveScript<T>('alert.py', args, { baseUrl: weft.url, apiKey: key.key, project: P });
    const { alert_ref, op } = await run<{ alert_ref: string; op: string }>(['setup']);
    expect(alert_ref).toMatch(new RegExp(`^weave:///${P}/object/low-score:`));

    // Good scores: the alert is evaluated, stays ok, sends nothing.
    await run(['calls', ...Array(10).fill('0.9')]);
    await expect
      .poll(async () => (await post(api, '/alerts/list', { project_id: P })).alerts[0]?.value, { timeout: EVENTUALLY_MS, interval: 200 })
      .toBeCloseTo(0.9, 9);
    const listed = (await post(api, '/alerts/list', { project_id: P })).alerts;
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({
      alert: 'low-score',
      state: 'ok',
      invalid: null,
      metric_path: 'output.score',
      aggregation: 'mean',
      calls: 10,
    });
    expect(receiver.of(P)).toEqual([]);

    // The mean of the last 10 falls below 0.5: one firing, within two intervals of the calls being written.
    const low = ['0.1', '0.2', '0.3', '0.4', '0.1', '0.2', '0.3', '0.4', '0.1', '0.2'];
    await run(['calls', ...low]);
    const written = Date.now();
    await expect.poll(() => receiver.of(P).length, { timeout: 4 * INTERVAL_MS, interval: 50 }).toBe(1);
    const firing = receiver.got.find((g) => g.json.project_id === P)!;
    expect(firing.at - written).toBeLessThanOrEqual(2 * INTERVAL_MS);
    expect(firing.json).toMatchObject({ state: 'firing', alert: 'low-score', alert_ref, project_id: P, threshold: 0.5 });
    expect(firing.json.window).toEqual({ size: 10, duration_seconds: null, calls: 10 });
    // Exactly the figure of the raw query: the mean of the last 10 calls' output.score.
    const last10 = await api.jsonl<any>('/calls/stream_query', {
      project_id: P,
      filter: { op_names: [op] },
      sort_by: [{ field: 'ended_at', direction: 'desc' }],
      limit: 10,
    });
    const raw = last10.reduce((s, c) => s + c.output.score, 0) / last10.length;
    expect(firing.json.value).toBeCloseTo(raw, 12);
    expect(firing.json.value).toBeCloseTo(0.23, 12);
    // Signed with the channel's secret; the event id rides in a header.
    expect(firing.headers['x-weft-signature']).toBe(`sha256=${createHmac('sha256', SECRET).update(firing.body).digest('hex')}`);
    expect(firing.headers['x-weft-event-id']).toBe(firing.json.id);

    // Still low at the next passes: no second firing.
    await sleep(3 * INTERVAL_MS);
    expect(receiver.of(P)).toHaveLength(1);
    // On the threshold (mean exactly 0.5), then just above it (0.51, inside the band): still firing, nothing sent.
    await run(['calls', ...Array(10).fill('0.5')]);
    await sleep(3 * INTERVAL_MS);
    expect((await post(api, '/alerts/list', { project_id: P })).alerts[0]).toMatchObject({ state: 'firing', value: 0.5 });
    await run(['calls', ...Array(10).fill('0.51')]);
    await sleep(3 * INTERVAL_MS);
    expect((await post(api, '/alerts/list', { project_id: P })).alerts[0]).toMatchObject({ state: 'firing' });
    expect(receiver.of(P)).toHaveLength(1);

    // Clearly back above: one resolved.
    await run(['calls', ...Array(10).fill('0.9')]);
    await expect.poll(() => receiver.of(P).length, { timeout: EVENTUALLY_MS, interval: 50 }).toBe(2);
    expect(receiver.of(P)[1]).toMatchObject({ state: 'resolved', alert: 'low-score', value: expect.closeTo(0.9, 9) });
    await sleep(3 * INTERVAL_MS);
    expect(receiver.of(P).map((j) => j.state)).toEqual(['firing', 'resolved']);

    // The events, newest first, each with its delivery.
    const { events } = await post(api, '/alerts/events/query', { project_id: P, alert_ref });
    expect(events.map((e: any) => e.state)).toEqual(['resolved', 'firing']);
    for (const e of events) {
      expect(e.deliveries).toEqual([
        expect.objectContaining({ channel_id: channel.id, status: 'sent', attempts: 1, last_status_code: 200 }),
      ]);
    }
    expect((await post(api, '/alerts/events/query', { project_id: P, state: 'firing' })).events).toHaveLength(1);
  }, 300_000);

  it("an alert on a Monitor's scorer (monitor_ref, scorer_ref): its scores' mean over the window", async () => {
    const P = `${E}/mon`;
    await post(api, '/alerts/channels/create', { project_id: P, name: 'ops', url: receiver.url, format: 'json' });
    const obj = async (object_id: string, val: Record<string, unknown>) =>
      `weave:///${P}/object/${object_id}:${(await post(api, '/obj/create', { obj: { project_id: P, object_id, val } })).digest}`;
    const scorer = await obj('ValidJSONScorer', {
      _type: 'ValidJSONScorer',
      _class_name: 'ValidJSONScorer',
      _bases: ['Scorer', 'Object', 'BaseModel'],
    });
    const opName = `weave:///${P}/op/reply:v1`;
    const monitor = await obj('json-check', {
      _type: 'Monitor',
      name: 'json-check',
      active: true,
      op_names: [opName],
      sampling_rate: 1,
      scorers: [scorer],
      _class_name: 'Monitor',
      _bases: ['Object', 'BaseModel'],
    });
    await obj(
      'json-broken',
      alertSpecVal('json-broken', {
        metric_path: 'output.json_valid',
        aggregation_function: 'mean',
        comparison_operator: 'LESS_THAN',
        threshold: 0.5,
        window_size: 4,
        monitor_ref: monitor,
        scorer_ref: scorer,
      }),
    );
    await sleep(50);
    // Valid JSON first: scored true, the mean is 1.
    await post(
      api,
      '/call/upsert_batch',
      callsBatch(
        P,
        opName,
        Array.from({ length: 4 }, () => ({ output: '{"a": 1}' })),
      ),
    );
    await expect
      .poll(async () => (await post(api, '/alerts/list', { project_id: P })).alerts[0]?.value, { timeout: 20_000, interval: 200 })
      .toBe(1);
    // Three broken outputs among the last four scores: mean 0.25 → firing.
    await post(
      api,
      '/call/upsert_batch',
      callsBatch(
        P,
        opName,
        Array.from({ length: 3 }, () => ({ output: 'not json' })),
      ),
    );
    await expect.poll(() => receiver.of(P).length, { timeout: 20_000, interval: 100 }).toBe(1);
    expect(receiver.of(P)[0]).toMatchObject({ state: 'firing', alert: 'json-broken', value: 0.25, window: { size: 4, calls: 4 } });
    const scores = (await post(api, '/feedback/query', { project_id: P, limit: 100 })).result;
    expect(scores.filter((f: any) => f.trigger_ref === monitor)).toHaveLength(7);
  }, 120_000);

  it('error percentage of one op (status_match_value), exact; calls of another op do not count', async () => {
    const P = `${E}/errors`;
    await post(api, '/alerts/channels/create', { project_id: P, name: 'ops', url: receiver.url, format: 'json' });
    const flaky = `weave:///${P}/op/flaky:aaa`;
    const other = `weave:///${P}/op/other:bbb`;
    await post(api, '/obj/create', {
      obj: {
        project_id: P,
        object_id: 'flaky-errors',
        val: alertSpecVal(
          'flaky-errors',
          {
            metric_path: '',
            aggregation_function: 'percentage',
            status_match_value: '2',
            comparison_operator: 'GREATER_THAN',
            threshold: 20,
            window_size: 10,
          },
          [`weave:///${P}/op/flaky:*`],
        ),
      },
    });
    // 1 error in 10 (10%) of flaky, and many errors of another op: ok.
    await post(api, '/call/upsert_batch', callsBatch(P, flaky, [{ error: true }, ...Array.from({ length: 9 }, () => ({ output: 1 }))]));
    await post(
      api,
      '/call/upsert_batch',
      callsBatch(
        P,
        other,
        Array.from({ length: 10 }, () => ({ error: true })),
      ),
    );
    await expect
      .poll(async () => (await post(api, '/alerts/list', { project_id: P })).alerts[0]?.value, { timeout: EVENTUALLY_MS, interval: 200 })
      .toBe(10);
    expect(receiver.of(P)).toEqual([]);
    // A newer version of the op (`:*` scopes every version) fails 3 times: 3 of the last 10 calls, 30% → firing.
    await post(api, '/call/upsert_batch', callsBatch(P, `weave:///${P}/op/flaky:ccc`, [{ error: true }, { error: true }, { error: true }]));
    await expect.poll(() => receiver.of(P).length, { timeout: EVENTUALLY_MS, interval: 100 }).toBe(1);
    const raw = await api.jsonl<any>('/calls/stream_query', {
      project_id: P,
      filter: { op_names: [`weave:///${P}/op/flaky:*`] },
      sort_by: [{ field: 'ended_at', direction: 'desc' }],
      limit: 10,
    });
    const rawRate = (100 * raw.filter((c) => c.exception).length) / raw.length;
    expect(receiver.of(P)[0]).toMatchObject({ state: 'firing', alert: 'flaky-errors', value: rawRate });
    expect(rawRate).toBe(30);
  }, 120_000);

  it('every aggregation, and the per-call figures tokens and cost, equal the raw figures of the same calls', async () => {
    const P = `${E}/figures`;
    const op = `weave:///${P}/op/f:1`;
    const values = [3, 1, 4, 1, 5, 9, 2, 6, 5];
    const tags = ['a', 'b', 'a', 'a', 'c', 'a', 'b', 'a', 'c'];
    const usage = (i: number) => ({
      'gpt-4o': { requests: 1, prompt_tokens: 100 * (i + 1), completion_tokens: 10 * (i + 1), total_tokens: 110 * (i + 1) },
    });
    const never = { comparison_operator: 'GREATER_THAN', threshold: 1e12 };
    const specs: Record<string, Record<string, unknown>> = {
      mean: { metric_path: 'output.v', aggregation_function: 'mean', window_size: 9 },
      median: { metric_path: 'output.v', aggregation_function: 'median', window_size: 9 },
      min: { metric_path: 'output.v', aggregation_function: 'min', window_size: 9 },
      max: { metric_path: 'output.v', aggregation_function: 'max', window_size: 9 },
      mode: { metric_path: 'output.v', aggregation_function: 'mode', window_size: 9 },
      sum: { metric_path: 'output.v', weft_aggregation: 'sum', window_size: 9 },
      p90: { metric_path: 'output.v', weft_aggregation: 'p90', window_size: 9 },
      last4: { metric_path: 'output.v', aggregation_function: 'mean', window_size: 4 },
      share: { metric_path: 'output.tag', aggregation_function: 'percentage', status_match_value: 'a', window_size: 9 },
      counted: { metric_path: 'output.tag', aggregation_function: 'count', status_match_value: 'c', window_size: 9 },
      tokens: { metric_path: 'tokens', weft_aggregation: 'sum', window_duration: 3600 },
      cost: { metric_path: 'cost', weft_aggregation: 'sum', window_duration: 3600 },
    };
    for (const [name, spec] of Object.entries(specs)) {
      await post(api, '/obj/create', { obj: { project_id: P, object_id: name, val: alertSpecVal(name, { ...never, ...spec }) } });
    }
    await post(
      api,
      '/call/upsert_batch',
      callsBatch(
        P,
        op,
        values.map((v, i) => ({ output: { v, tag: tags[i] }, summary: { usage: usage(i) } })),
      ),
    );
    const got = await everyFigure(P);
    // The raw calls, newest first, as the API returns them.
    const raw = await api.jsonl<any>('/calls/stream_query', { project_id: P, sort_by: [{ field: 'ended_at', direction: 'desc' }] });
    const v = raw.map((c) => c.output.v as number);
    const sorted = [...v].sort((a, b) => a - b);
    const quantile = (q: number) => {
      const h = (sorted.length - 1) * q;
      return sorted[Math.floor(h)]! + (h - Math.floor(h)) * (sorted[Math.ceil(h)]! - sorted[Math.floor(h)]!);
    };
    const sum = v.reduce((a, b) => a + b, 0);
    expect(got.mean).toBeCloseTo(sum / v.length, 12);
    expect(got.median).toBe(quantile(0.5));
    expect(got.min).toBe(sorted[0]);
    expect(got.max).toBe(sorted.at(-1));
    expect(got.mode).toBe(1); // 1 and 5 twice each: the smaller
    expect(got.sum).toBe(sum);
    expect(got.p90).toBeCloseTo(quantile(0.9), 12);
    expect(got.last4).toBeCloseTo(v.slice(0, 4).reduce((a, b) => a + b, 0) / 4, 12);
    expect(got.share).toBeCloseTo((100 * raw.filter((c) => c.output.tag === 'a').length) / raw.length, 12);
    expect(got.counted).toBe(raw.filter((c) => c.output.tag === 'c').length);
    expect(got.tokens).toBe(raw.reduce((a, c) => a + c.summary.usage['gpt-4o'].total_tokens, 0));
    // Cost: what the analytics catalogue says the same calls cost.
    const analytics = await post(api, '/analytics/query', { project_id: P, metrics: ['cost'], dimensions: [] });
    expect(analytics.rows[0].cost).toBeGreaterThan(0);
    expect(got.cost).toBeCloseTo(analytics.rows[0].cost, 12);
    expect(receiver.of(P)).toEqual([]);
  }, 120_000);

  it('the last N calls however long ago they ended (the window looks back in widening steps), and own tokens over a duration: exact', async () => {
    const P = `${E}/lookback`;
    const op = `weave:///${P}/op/g:1`;
    const MIN = 60_000;
    // Newest first: ended 1 min, 2 min, 20 min, 3 h, 30 h, 10 days and 60 days ago — across every step of the look-back.
    const ages = [1, 2, 20, 180, 1800, 14_400, 86_400].map((m) => m * MIN);
    const never = { comparison_operator: 'GREATER_THAN', threshold: 1e12 };
    const lasts = [1, 2, 3, 4, 5, 6, 7, 9];
    for (const n of lasts)
      await post(api, '/obj/create', {
        obj: {
          project_id: P,
          object_id: `last${n}`,
          val: alertSpecVal(`last${n}`, { ...never, metric_path: 'output.v', weft_aggregation: 'sum', window_size: n }),
        },
      });
    await post(api, '/obj/create', {
      obj: {
        project_id: P,
        object_id: 'tokens10m',
        val: alertSpecVal('tokens10m', { ...never, metric_path: 'tokens', weft_aggregation: 'sum', window_duration: 600 }),
      },
    });
    await post(
      api,
      '/call/upsert_batch',
      callsBatch(
        P,
        op,
        ages.map((endedAgoMs, i) => ({ output: { v: 10 ** i }, endedAgoMs })),
      ),
    );
    // A parent whose usage is its child's rolled up (its own is none), both ended 3 min ago; an older call's tokens outside the window.
    const usage = (t: number) => ({ 'gpt-4o': { requests: 1, prompt_tokens: t - 10, completion_tokens: 10, total_tokens: t } });
    const at = (agoMs: number) => new Date(Date.now() - agoMs).toISOString();
    const [parent, child, old] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
    const call = (id: string, parentId: string | null, startAgo: number, endAgo: number, tokens: number) => [
      {
        mode: 'start',
        req: {
          start: {
            project_id: P,
            id,
            trace_id: parentId ?? id,
            parent_id: parentId,
            op_name: 'llm',
            started_at: at(startAgo),
            inputs: {},
            attributes: {},
          },
        },
      },
      { mode: 'end', req: { end: { project_id: P, id, ended_at: at(endAgo), output: null, summary: { usage: usage(tokens) } } } },
    ];
    await post(api, '/call/upsert_batch', {
      batch: [
        ...call(parent, null, 4 * MIN, 3 * MIN, 110),
        ...call(child, parent, 3.9 * MIN, 3.1 * MIN, 110),
        ...call(old, null, 121 * MIN, 120 * MIN, 1000),
      ],
    });
    const got = await everyFigure(P);
    // The raw values, newest first (the SDK's view of the same calls).
    const raw = await api.jsonl<any>('/calls/stream_query', {
      project_id: P,
      filter: { op_names: [op] },
      sort_by: [{ field: 'ended_at', direction: 'desc' }],
    });
    const v = raw.map((c) => c.output.v as number);
    expect(v).toEqual(ages.map((_, i) => 10 ** i));
    for (const n of lasts) expect(got[`last${n}`]).toBe(v.slice(0, n).reduce((a, b) => a + b, 0));
    expect(got.tokens10m).toBe(110);
    expect(receiver.of(P)).toEqual([]);
  }, 120_000);

  it('a window_duration alert: calls count while in the window, and it resolves once they age out of it (Slack body)', async () => {
    const P = `${E}/burst`;
    await post(api, '/alerts/channels/create', { project_id: P, name: 'slack', url: receiver.url, format: 'slack' });
    const op = `weave:///${P}/op/burst:x`;
    await post(api, '/obj/create', {
      obj: {
        project_id: P,
        object_id: 'burst',
        val: alertSpecVal('burst', {
          metric_path: 'latency',
          aggregation_function: 'count',
          comparison_operator: 'GREATER_THAN',
          threshold: 2,
          window_duration: 5,
        }),
      },
    });
    const seen = () => receiver.got.filter((g) => typeof g.json.text === 'string' && g.json.text.includes(P));
    await post(
      api,
      '/call/upsert_batch',
      callsBatch(
        P,
        op,
        Array.from({ length: 4 }, () => ({ output: 1, latencyMs: 100 })),
      ),
    );
    await expect.poll(() => seen().length, { timeout: EVENTUALLY_MS, interval: 100 }).toBe(1);
    expect(seen()[0]!.json.text).toContain('*burst* is *firing*');
    expect(seen()[0]!.json.text).toContain('count(latency) = 4');
    // No new calls: five seconds later they are out of the window, the count is 0 → resolved.
    await expect.poll(() => seen().length, { timeout: 5000 + 4 * INTERVAL_MS, interval: 100 }).toBe(2);
    expect(seen()[1]!.json.text).toContain('*burst* is *resolved*');
    expect(seen()[1]!.json.text).toContain('count(latency) = 0');
  }, 120_000);

  it('muted: the transition is recorded, not delivered; unmuted: later ones are; weft alerts list|events|test', async () => {
    const P = `${E}/muted`;
    const ch = await post(api, '/alerts/channels/create', { project_id: P, name: 'ops', url: receiver.url, format: 'json' });
    const op = `weave:///${P}/op/slow:x`;
    const spec = {
      metric_path: 'latency',
      aggregation_function: 'max',
      comparison_operator: 'GREATER_THAN',
      threshold: 1000,
      window_size: 3,
    };
    await post(api, '/obj/create', { obj: { project_id: P, object_id: 'slow', val: alertSpecVal('slow', spec) } });
    const until = new Date(Date.now() + 3600_000).toISOString();
    expect(await post(api, '/alerts/mute', { project_id: P, alert_ref: 'slow', until })).toMatchObject({ alert: 'slow' });
    await post(api, '/call/upsert_batch', callsBatch(P, op, [{ latencyMs: 2500 }]));
    await expect
      .poll(async () => (await post(api, '/alerts/events/query', { project_id: P })).events.length, {
        timeout: EVENTUALLY_MS,
        interval: 100,
      })
      .toBe(1);
    const [muted] = (await post(api, '/alerts/events/query', { project_id: P })).events;
    expect(muted).toMatchObject({ state: 'firing', muted: true, deliveries: [], value: 2500 });
    await sleep(2 * INTERVAL_MS);
    expect(receiver.of(P)).toEqual([]);
    await post(api, '/alerts/unmute', { project_id: P, alert_ref: `weave:///${P}/object/slow:*` });
    await post(
      api,
      '/call/upsert_batch',
      callsBatch(
        P,
        op,
        Array.from({ length: 3 }, () => ({ latencyMs: 10 })),
      ),
    );
    await expect.poll(() => receiver.of(P).length, { timeout: EVENTUALLY_MS, interval: 100 }).toBe(1);
    expect(receiver.of(P)[0]).toMatchObject({ state: 'resolved', alert: 'slow', value: 10 });

    const env = { WEFT_URL: weft.url, WEFT_API_KEY: key.key };
    const list = await weftCli(['alerts', P], env);
    expect(list.code, list.err).toBe(0);
    expect(JSON.parse(list.out).alerts).toEqual([expect.objectContaining({ alert: 'slow', state: 'resolved', value: 10 })]);
    const events = await weftCli(['alerts', P, 'events'], env);
    expect(events.code, events.err).toBe(0);
    expect(JSON.parse(events.out).events.map((e: any) => e.state)).toEqual(['resolved', 'firing']);
    const before = receiver.got.length;
    const test = await weftCli(['alerts', P, 'test', ch.id], env);
    expect(test.code, test.err).toBe(0);
    expect(JSON.parse(test.out)).toEqual({ ok: true, status_code: 200, error: null });
    expect(receiver.got.length).toBe(before + 1);
    expect(receiver.got.at(-1)!.json).toMatchObject({ state: 'test', project_id: P });
    expect((await weftCli(['alerts', P, 'frobnicate'], env)).code).toBe(2);
  }, 120_000);

  it("tenancy: another entity's channels, events and alerts are neither readable nor reachable", async () => {
    const P = `${E}/sdk`;
    expect((await admin.post('/admin/entities/create', { name: 'intruder' })).status).toBe(200);
    const mallory = clientFor(admin, await createKey(admin, 'mallory', ['intruder']));
    const mine = (await post(api, '/alerts/channels/list', { project_id: P })).channels;
    expect(mine).toHaveLength(1);
    for (const [path, body] of [
      ['/alerts/channels/list', { project_id: P }],
      ['/alerts/events/query', { project_id: P }],
      ['/alerts/list', { project_id: P }],
      ['/alerts/channels/test', { project_id: P, channel_id: mine[0].id }],
      ['/alerts/channels/delete', { project_id: P, channel_id: mine[0].id }],
      ['/alerts/channels/create', { project_id: P, name: 'steal', url: 'http://127.0.0.1:9/x' }],
      ['/alerts/mute', { project_id: P, alert_ref: 'low-score', until: new Date(Date.now() + 3600_000).toISOString() }],
    ] as const) {
      expect((await mallory.post(path, body)).status, path).toBe(403);
    }
    // Its own project, naming our channel or our alert: not found, or refused.
    const before = receiver.got.length;
    expect((await mallory.post('/alerts/channels/test', { project_id: 'intruder/x', channel_id: mine[0].id })).status).toBe(404);
    expect((await mallory.post('/alerts/channels/delete', { project_id: 'intruder/x', channel_id: mine[0].id })).status).toBe(404);
    const ours = (await post(api, '/alerts/list', { project_id: P })).alerts[0].alert_ref;
    expect(
      (await mallory.post('/alerts/mute', { project_id: 'intruder/x', alert_ref: ours, until: new Date().toISOString() })).status,
    ).toBe(403);
    // An AlertSpec of its own that points at our op or our monitor is refused at the edge.
    const spy = alertSpecVal('spy', { metric_path: 'output.score', threshold: 0 }, [`weave:///${P}/op/answer:*`]);
    expect((await mallory.post('/obj/create', { obj: { project_id: 'intruder/x', object_id: 'spy', val: spy } })).status).toBe(403);
    // Its own alert firing goes to its own channels only.
    const own = new Receiver();
    await own.up();
    try {
      await post(mallory, '/alerts/channels/create', { project_id: 'intruder/x', name: 'mine', url: own.url });
      await post(mallory, '/obj/create', {
        obj: {
          project_id: 'intruder/x',
          object_id: 'any',
          val: alertSpecVal('any', { metric_path: 'latency', aggregation_function: 'count', threshold: 0 }),
        },
      });
      await post(mallory, '/call/upsert_batch', callsBatch('intruder/x', 'weave:///intruder/x/op/a:1', [{ output: 1 }]));
      await expect.poll(() => own.got.length, { timeout: EVENTUALLY_MS, interval: 100 }).toBe(1);
      expect(own.got[0]!.json).toMatchObject({ project_id: 'intruder/x', state: 'firing' });
      expect(receiver.got.length).toBe(before);
      expect((await post(api, '/alerts/channels/list', { project_id: P })).channels).toEqual(mine);
    } finally {
      await own.down();
    }
  }, 120_000);
  it("an entity's channel (`<entity>/*`) gets the transitions of every project of the entity, beside the project's own", async () => {
    const everywhere = new Receiver();
    await everywhere.up();
    const entityChannel = await post(api, '/alerts/channels/create', {
      project_id: `${E}/*`,
      name: 'all of alrt',
      url: everywhere.url,
      format: 'json',
    });
    try {
      expect((await post(api, '/alerts/channels/list', { project_id: `${E}/*` })).channels).toEqual([entityChannel]);
      for (const P of [`${E}/ent-a`, `${E}/ent-b`]) {
        await post(api, '/obj/create', {
          obj: {
            project_id: P,
            object_id: 'any-error',
            val: alertSpecVal('any-error', { metric_path: 'error', aggregation_function: 'max', threshold: 0.5 }),
          },
        });
        await post(api, '/call/upsert_batch', callsBatch(P, `weave:///${P}/op/f:1`, [{ error: true }]));
      }
      await expect.poll(() => everywhere.got.length, { timeout: EVENTUALLY_MS, interval: 100 }).toBe(2);
      expect(everywhere.got.map((g) => g.json.project_id).sort()).toEqual([`${E}/ent-a`, `${E}/ent-b`]);
      // The receiver has the request before weft has its answer recorded: the log says sent soon after.
      await expect
        .poll(async () => (await post(api, '/alerts/events/query', { project_id: `${E}/ent-a` })).events[0]?.deliveries, {
          timeout: EVENTUALLY_MS,
          interval: 100,
        })
        .toEqual([expect.objectContaining({ channel_id: entityChannel.id, status: 'sent' })]);
      // Another entity cannot add one to ours, nor list ours.
      const mallory = clientFor(admin, await createKey(admin, 'mallory-2', ['intruder']));
      expect((await mallory.post('/alerts/channels/list', { project_id: `${E}/*` })).status).toBe(403);
      expect((await mallory.post('/alerts/channels/create', { project_id: `${E}/*`, name: 'x', url: everywhere.url })).status).toBe(403);
    } finally {
      await post(api, '/alerts/channels/delete', { project_id: `${E}/*`, channel_id: entityChannel.id });
      await everywhere.down();
    }
  }, 120_000);
});

describe('delivery', () => {
  it('the receiver down while an alert fires, then weft SIGKILLed: delivered once the receiver is back, once', async () => {
    const dir = newDataDir('alerts-outage');
    const env = { WEFT_ALERTS_INTERVAL_MS: '500', WEFT_RATE_LIMIT_MAX: '0', WEFT_ALERTS_ALLOW_PRIVATE_URLS: RECEIVERS };
    const down = new Receiver();
    await down.up();
    await down.down(); // its port is known, nothing listens on it
    let first: RunningWeft | null = await startWeft({ dataDir: dir, env });
    let second: RunningWeft | null = null;
    try {
      const a = new Client(first.url);
      const P = 'outage/app';
      await post(a, '/alerts/channels/create', { project_id: P, name: 'down', url: down.url });
      await post(a, '/obj/create', {
        obj: {
          project_id: P,
          object_id: 'errs',
          val: alertSpecVal('errs', { metric_path: 'error', aggregation_function: 'max', threshold: 0.5 }),
        },
      });
      await post(a, '/call/upsert_batch', callsBatch(P, `weave:///${P}/op/f:1`, [{ error: true }]));
      // Fired; its delivery tried and failed (connection refused), still pending.
      const delivery = async (c: Client) => (await post(c, '/alerts/events/query', { project_id: P })).events[0]?.deliveries[0];
      await expect.poll(async () => (await delivery(a))?.attempts ?? 0, { timeout: 20_000, interval: 200 }).toBeGreaterThanOrEqual(1);
      expect(await delivery(a)).toMatchObject({
        status: 'pending',
        last_status_code: null,
        last_error: expect.stringMatching(/ECONNREFUSED/),
      });
      await first.kill();
      first = null;
      second = await startWeft({ dataDir: dir, env });
      const b = new Client(second.url);
      await sleep(1500);
      expect(down.got).toEqual([]);
      await down.up();
      // Back-off is capped at ten intervals (5 s here).
      await expect.poll(() => down.got.length, { timeout: 15_000, interval: 100 }).toBe(1);
      expect(down.got[0]!.json).toMatchObject({ state: 'firing', alert: 'errs', project_id: P, value: 1 });
      await expect.poll(async () => (await delivery(b))?.status, { timeout: 5000, interval: 200 }).toBe('sent');
      expect((await delivery(b)).attempts).toBeGreaterThanOrEqual(2);
      await sleep(2000);
      expect(down.got).toHaveLength(1);
      expect((await post(b, '/alerts/events/query', { project_id: P })).events).toHaveLength(1);
    } finally {
      await first?.kill();
      await second?.stop();
      await down.down();
    }
  }, 180_000);

  it('channel URLs off the public Internet: refused at create unless allowed (400 naming url), and again at delivery', async () => {
    const dir = newDataDir('alerts-ssrf');
    const hook = new Receiver();
    await hook.up();
    const base = { WEFT_ALERTS_INTERVAL_MS: '500', WEFT_RATE_LIMIT_MAX: '0' };
    let w: RunningWeft | null = await startWeft({ dataDir: dir, env: { ...base, WEFT_ALERTS_ALLOW_PRIVATE_URLS: RECEIVERS } });
    const P = 'ssrf/app';
    try {
      let a = new Client(w.url);
      // Allowed: the receiver's address. Not allowed: a private network, the cloud metadata
      // service, another loopback address, IPv6 loopback.
      const channel = await post(a, '/alerts/channels/create', { project_id: P, name: 'local', url: hook.url });
      for (const [url, kind] of [
        ['http://10.1.2.3/hook', 'private'],
        ['http://169.254.169.254/latest/meta-data/', 'link-local'],
        ['http://127.0.0.2:9/hook', 'loopback'],
        ['http://[::1]:9/hook', 'loopback'],
      ]) {
        const r = await a.post('/alerts/channels/create', { project_id: P, name: 'x', url });
        expect(r.status, url).toBe(400);
        expect(r.body.field, url).toBe('url');
        expect(r.text, url).toMatch(new RegExp(`url: .* is a ${kind} address.*WEFT_ALERTS_ALLOW_PRIVATE_URLS`));
      }
      expect((await post(a, '/alerts/channels/list', { project_id: P })).channels.map((c: any) => c.name)).toEqual(['local']);
      expect(await post(a, '/alerts/channels/test', { project_id: P, channel_id: channel.id })).toMatchObject({ ok: true });
      expect(hook.got).toHaveLength(1);

      // The same store, the allowance gone: the stored channel is refused when delivering.
      await w.stop();
      w = await startWeft({ dataDir: dir, env: base });
      a = new Client(w.url);
      const test = await post(a, '/alerts/channels/test', { project_id: P, channel_id: channel.id });
      expect(test).toMatchObject({ ok: false, status_code: null, error: expect.stringMatching(/127\.0\.0\.1 is a loopback address/) });
      await post(a, '/obj/create', {
        obj: {
          project_id: P,
          object_id: 'errs',
          val: alertSpecVal('errs', { metric_path: 'error', aggregation_function: 'max', threshold: 0.5 }),
        },
      });
      await post(a, '/call/upsert_batch', callsBatch(P, `weave:///${P}/op/f:1`, [{ error: true }]));
      const delivery = async () => (await post(a, '/alerts/events/query', { project_id: P })).events[0]?.deliveries[0];
      // Refused once and given up at once (not retried for a day): the log says why.
      await expect.poll(async () => (await delivery())?.status, { timeout: 20_000, interval: 200 }).toBe('failed');
      expect(await delivery()).toMatchObject({ attempts: 1, last_status_code: null, last_error: expect.stringMatching(/loopback/) });
      await sleep(1500);
      expect(hook.got).toHaveLength(1);
    } finally {
      await w?.stop();
      await hook.down();
    }
  }, 180_000);

  it('two weft processes on one store: one of them evaluates and delivers, so each transition is sent once', async () => {
    const dir = newDataDir('alerts-two');
    const ch = await startSharedClickHouse(join(dir, 'clickhouse'));
    const env = {
      WEFT_ALERTS_INTERVAL_MS: '300',
      WEFT_RATE_LIMIT_MAX: '0',
      CLICKHOUSE_URL: ch.url,
      WEFT_ALERTS_ALLOW_PRIVATE_URLS: RECEIVERS,
    };
    const hook = new Receiver();
    await hook.up();
    const wefts: RunningWeft[] = [];
    try {
      wefts.push(await startWeft({ dataDir: join(dir, 'a'), env }));
      wefts.push(await startWeft({ dataDir: join(dir, 'b'), env }));
      const [a, b] = wefts.map((w) => new Client(w.url)) as [Client, Client];
      const P = 'two/app';
      await post(a, '/alerts/channels/create', { project_id: P, name: 'one', url: hook.url });
      await post(b, '/obj/create', {
        obj: {
          project_id: P,
          object_id: 'flip',
          val: alertSpecVal('flip', {
            metric_path: 'output.v',
            aggregation_function: 'mean',
            comparison_operator: 'GREATER_THAN',
            threshold: 5,
            window_size: 1,
          }),
        },
      });
      // Up and down five times: ten transitions, each delivered once.
      for (let i = 0; i < 5; i++) {
        await post(i % 2 ? a : b, '/call/upsert_batch', callsBatch(P, 'weave:///two/app/op/o:1', [{ output: { v: 10 } }]));
        await expect.poll(() => hook.got.length, { timeout: 15_000, interval: 50 }).toBe(2 * i + 1);
        await post(i % 2 ? b : a, '/call/upsert_batch', callsBatch(P, 'weave:///two/app/op/o:1', [{ output: { v: 0 } }]));
        await expect.poll(() => hook.got.length, { timeout: 15_000, interval: 50 }).toBe(2 * i + 2);
      }
      await sleep(2000);
      expect(hook.got.map((g) => g.json.state)).toEqual(Array.from({ length: 10 }, (_, i) => (i % 2 ? 'resolved' : 'firing')));
      expect(new Set(hook.got.map((g) => g.json.id)).size).toBe(10);
    } finally {
      for (const w of wefts) await w.stop();
      await ch.stop();
      await hook.down();
    }
  }, 300_000);
});
