import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endedCallsBatch, publishMonitor, startSharedClickHouse } from '@weft/harness';
import { Client } from './helpers/client';
import { weftCli } from './helpers/cli';
import { createKey, clientFor, type TestKey } from './helpers/keys';
import { startModelServer, type ModelServer } from './helpers/model-server';
import { newDataDir, startWeft, type RunningWeft } from './helpers/server';
import { runWeaveScript } from './helpers/weave-sdk';

/**
 * Weave Monitors scored by weft: the real Weave SDK activates a monitor (an LLM judge and a JSON
 * check on one op), traces calls, and weft's monitor worker scores each new call of that op
 * once, storing the feedback Weave's scoring workers write; the judge is the model stand-in,
 * scripted to answer, to answer non-JSON, or to fail.
 */
const P = 'mon/app';
const JUDGE = 'judge-mini';
let upstream: ModelServer;
let weft: RunningWeft;
let api: Client;
let key: TestKey;
const judged: string[] = [];

beforeAll(async () => {
  upstream = await startModelServer();
  const dir = newDataDir('monitors');
  const file = join(dir, 'upstreams.json');
  // A judge slower than its upstream's timeout is an error result, not a stuck monitor.
  writeFileSync(
    file,
    JSON.stringify({ upstreams: [{ name: 'judges', base_url: `${upstream.url}/vllm/v1`, models: [JUDGE], timeout_ms: 1500 }] }),
  );
  weft = await startWeft({ dataDir: dir, env: { WEFT_UPSTREAMS_FILE: file, WEFT_MONITORS_INTERVAL_MS: '300', WEFT_RATE_LIMIT_MAX: '0' } });
  api = new Client(weft.url);
  expect((await api.post('/admin/entities/create', { name: 'mon' })).status).toBe(200);
  key = await createKey(api, 'mon-alice', ['mon']);
  upstream.script((body) => {
    if (body.messages?.[0]?.content !== 'You grade answers.') return undefined;
    const prompt = String(body.messages[1].content);
    judged.push(prompt);
    if (prompt.includes('(to: broken)')) return { content: 'not json at all' };
    if (prompt.includes('(to: failing)')) return { status: 500, message: 'judge down' };
    if (prompt.includes('(to: slow)')) return { content: '{"helpful": true}', delayMs: 4000 };
    return { content: JSON.stringify({ helpful: !prompt.includes('(to: rude)'), format: body.response_format?.type }) };
  });
}, 180_000);
afterAll(async () => {
  await weft?.stop();
  await upstream?.close();
});

type Feedback = {
  feedback_type: string;
  payload: { output: unknown; error?: string };
  runnable_ref: string;
  trigger_ref: string;
  weave_ref: string;
};
const feedbackOn = async (id: string): Promise<Feedback[]> =>
  (
    await clientFor(api, key).post('/feedback/query', {
      project_id: P,
      query: { $expr: { $eq: [{ $getField: 'weave_ref' }, { $literal: `weave:///${P}/call/${id}` }] } },
    })
  ).body.result;

describe('Weave Monitors run by weft', () => {
  it("scores every new call of the monitor's op once with its LLM judge and JSON check, as Weave's feedback; judge failures stored as errors", async () => {
    const { calls, other } = await runWeaveScript<{ calls: string[]; other: string }>(
      'monitor.py',
      ['weather', 'json', 'rude', 'broken', 'failing', 'slow'],
      {
        baseUrl: weft.url,
        apiKey: key.key,
        project: P,
        extraEnv: { JUDGE_MODEL: JUDGE },
      },
    );
    const [weather, json, rude, broken, failing, slow] = calls as [string, string, string, string, string, string];
    await expect.poll(async () => (await feedbackOn(failing)).length, { timeout: 60_000, interval: 300 }).toBe(2);
    for (const id of calls) await expect.poll(async () => (await feedbackOn(id)).length, { timeout: 30_000, interval: 300 }).toBe(2);

    const byType = async (id: string) => Object.fromEntries((await feedbackOn(id)).map((f) => [f.feedback_type, f]));
    const w = await byType(weather);
    expect(Object.keys(w).sort()).toEqual(['wandb.runnable.ValidJSONScorer', 'wandb.runnable.helpful']);
    expect(w['wandb.runnable.helpful']!.payload).toEqual({ output: { helpful: true, format: 'json_object' } });
    expect(w['wandb.runnable.helpful']!.runnable_ref).toMatch(new RegExp(`^weave:///${P}/object/helpful:`));
    expect(w['wandb.runnable.helpful']!.trigger_ref).toMatch(new RegExp(`^weave:///${P}/object/helpfulness:`));
    expect(w['wandb.runnable.ValidJSONScorer']!.payload).toEqual({ output: { json_valid: false } });
    expect((await byType(json))['wandb.runnable.ValidJSONScorer']!.payload).toEqual({ output: { json_valid: true } });
    expect((await byType(rude))['wandb.runnable.helpful']!.payload).toEqual({ output: { helpful: false, format: 'json_object' } });
    expect((await byType(broken))['wandb.runnable.helpful']!.payload).toMatchObject({
      output: null,
      error: expect.stringContaining('non-JSON'),
    });
    expect((await byType(failing))['wandb.runnable.helpful']!.payload).toMatchObject({
      output: null,
      error: expect.stringContaining('judge down'),
    });
    expect((await byType(slow))['wandb.runnable.helpful']!.payload).toMatchObject({
      output: null,
      error: expect.stringContaining('did not answer within 1500 ms'),
    });
    // The prompt is the scorer's, formatted with the call's output and inputs.
    expect(judged).toContain('Grade this answer: an answer to weather (to: weather)');
    // A call of another op is not the monitor's; nothing is scored twice over later looks.
    expect(await feedbackOn(other)).toEqual([]);
    const asked = judged.length;
    await new Promise((r) => setTimeout(r, 1500));
    expect(judged.length).toBe(asked);
    for (const id of calls) expect((await feedbackOn(id)).length).toBe(2);
    // The judge's requests are recorded beside the project, each naming the call it judged; never scored.
    const judges = await clientFor(api, key).jsonl<any>('/calls/stream_query', { project_id: `${P}-judges` });
    expect(judges.length).toBeGreaterThanOrEqual(calls.length);
    expect(new Set(judges.map((c) => c.op_name))).toEqual(new Set(['weft.judge']));
    expect(new Set(judges.map((c) => c.attributes.weft.judged.call_id))).toEqual(new Set(calls));
    const weatherJudge = judges.find((c) => c.attributes.weft.judged.call_id === weather)!;
    expect(weatherJudge.inputs.model).toBe(JUDGE);
    expect(weatherJudge.output).toBe(JSON.stringify({ helpful: true, format: 'json_object' }));
    expect(weatherJudge.summary.usage[JUDGE].total_tokens).toBeGreaterThan(0);
    expect(JSON.parse(judges.find((c) => c.attributes.weft.judged.call_id === failing)!.exception).message).toContain('judge down');
    expect((await clientFor(api, key).post('/feedback/query', { project_id: `${P}-judges` })).body.result).toEqual([]);
    // The SDK reads the scores as the call's feedback.
    const seen = await runWeaveScript<{ call: { feedback_type: string; payload: unknown }[] }>('read-feedback.py', [weather], {
      baseUrl: weft.url,
      apiKey: key.key,
      project: P,
    });
    expect(seen.call).toEqual(
      expect.arrayContaining([{ feedback_type: 'wandb.runnable.helpful', payload: { output: { helpful: true, format: 'json_object' } } }]),
    );
  }, 600_000);

  it('debounced (scorer_debounce_config): a thread is scored once quiet, on its last call; a trace with all_messages, on all its outputs', async () => {
    const run = <T>(args: string[]) =>
      runWeaveScript<T>('monitor-debounce.py', args, { baseUrl: weft.url, apiKey: key.key, project: P, extraEnv: { JUDGE_MODEL: JUDGE } });
    await run(['setup']);
    const t1 = (await run<{ calls: string[] }>(['thread', 'thread-1', 'a', 'b', 'c'])).calls;
    const t2 = (await run<{ calls: string[] }>(['thread', 'thread-2', 'd', 'e'])).calls;
    const { root } = await run<{ root: string }>(['trace', 'x', 'y', 'z']);
    const steps = (
      await clientFor(api, key).jsonl<{ id: string; parent_id: string }>('/calls/stream_query', {
        project_id: P,
        filter: { parent_ids: [root] },
        sort_by: [{ field: 'started_at', direction: 'asc' }],
      })
    ).map((c) => c.id);
    expect(steps).toHaveLength(3);

    // Each thread's last call gets the thread judge's score; the calls before it none.
    await expect.poll(async () => (await feedbackOn(t1.at(-1)!)).length, { timeout: 30_000, interval: 300 }).toBe(1);
    await expect.poll(async () => (await feedbackOn(t2.at(-1)!)).length, { timeout: 30_000, interval: 300 }).toBe(1);
    expect((await feedbackOn(t1.at(-1)!))[0]!.feedback_type).toBe('wandb.runnable.thread_judge');
    for (const id of [...t1.slice(0, -1), ...t2.slice(0, -1)]) expect(await feedbackOn(id)).toEqual([]);
    expect(judged).toContain('Thread last: reply to c (to: c)');
    expect(judged.filter((j) => j.startsWith('Thread last:'))).toHaveLength(2);

    // The trace: one score, on its last step, of every step's output in order.
    await expect.poll(async () => (await feedbackOn(steps[2]!)).length, { timeout: 30_000, interval: 300 }).toBe(1);
    for (const id of steps.slice(0, 2)) expect(await feedbackOn(id)).toEqual([]);
    expect(judged).toContain('Trace all: ["step x","step y","step z"]');

    // A thread that speaks again is scored again once quiet, on its new last call.
    const more = (await run<{ calls: string[] }>(['thread', 'thread-1', 'f'])).calls;
    await expect.poll(async () => (await feedbackOn(more[0]!)).length, { timeout: 30_000, interval: 300 }).toBe(1);
    expect((await feedbackOn(t1.at(-1)!)).length).toBe(1);
    expect(judged.filter((j) => j.startsWith('Thread last:'))).toHaveLength(3);
  }, 600_000);

  it('weft monitors lists the monitors and deactivates one as the SDK would; a deactivated monitor scores nothing new', async () => {
    const env = { WEFT_URL: weft.url, WEFT_API_KEY: key.key };
    const list = await weftCli(['monitors', P], env);
    expect(list.code, list.err).toBe(0);
    const monitors = JSON.parse(list.out).monitors as { name: string; active: boolean; op_names: string[] }[];
    expect(monitors.map((m) => m.name).sort()).toEqual(['helpfulness', 'per-thread', 'per-trace']);
    expect(monitors.find((m) => m.name === 'helpfulness')).toMatchObject({
      active: true,
      op_names: [expect.stringContaining('/op/answer:')],
    });
    const off = await weftCli(['monitors', P, 'deactivate', 'helpfulness'], env);
    expect(off.code, off.err).toBe(0);
    expect(JSON.parse(off.out)).toMatchObject({ name: 'helpfulness', active: false });
    expect(JSON.parse((await weftCli(['monitors', P], env)).out).monitors.find((m: any) => m.name === 'helpfulness').active).toBe(false);

    const { calls } = await runWeaveScript<{ calls: string[] }>('monitor.py', ['after-deactivation'], {
      baseUrl: weft.url,
      apiKey: key.key,
      project: P,
      extraEnv: { JUDGE_MODEL: JUDGE, MONITOR_INACTIVE: '1' },
    });
    await new Promise((r) => setTimeout(r, 2000));
    expect(await feedbackOn(calls[0]!)).toEqual([]);
    const bad = await weftCli(['monitors', P, 'activate'], env);
    expect(bad.code).toBe(2);
  }, 300_000);

  it('a SIGKILL mid-backlog: after the restart every call is scored, and none has its score twice', async () => {
    const dir = newDataDir('monitors-crash');
    const file = join(dir, 'upstreams.json');
    writeFileSync(file, JSON.stringify({ upstreams: [{ name: 'judges', base_url: `${upstream.url}/vllm/v1`, models: [JUDGE] }] }));
    const env = { WEFT_UPSTREAMS_FILE: file, WEFT_MONITORS_INTERVAL_MS: '200', WEFT_RATE_LIMIT_MAX: '0' };
    const Q = 'mon/crash';
    let first: RunningWeft | null = await startWeft({ dataDir: dir, env });
    let second: RunningWeft | null = null;
    try {
      const admin = new Client(first.url);
      const post = async (path: string, body: unknown) => {
        const r = await admin.post(path, body);
        if (r.status !== 200) throw new Error(`${path} → ${r.status} ${r.text}`);
        return r.body as Record<string, unknown>;
      };
      await publishMonitor(post, { project: Q, op: 'backlog', judgeModel: JUDGE });
      const ids = Array.from({ length: 1500 }, (_, i) => `backlog-${i}`);
      for (let i = 0; i < ids.length; i += 500) await post('/call/upsert_batch', endedCallsBatch(Q, 'backlog', ids.slice(i, i + 500)));
      const scored = async (client: Client) => {
        const { result } = (await client.post('/feedback/query', { project_id: Q, fields: ['weave_ref', 'feedback_type'], limit: 100_000 }))
          .body as { result: { weave_ref: string; feedback_type: string }[] };
        return result;
      };
      // Killed once some of the backlog is scored, not all.
      await expect.poll(async () => (await scored(admin)).length, { timeout: 60_000, interval: 20 }).toBeGreaterThan(0);
      await first.kill();
      first = null;
      second = await startWeft({ dataDir: dir, env });
      const again = new Client(second.url);
      await expect.poll(async () => (await scored(again)).length, { timeout: 120_000, interval: 300 }).toBeGreaterThanOrEqual(3000);
      const rows = await scored(again);
      const keys = rows.map((f) => `${f.weave_ref} ${f.feedback_type}`);
      expect(new Set(keys).size).toBe(keys.length);
      expect(keys.length).toBe(3000);
      const called = new Set(rows.map((f) => f.weave_ref.split('/').pop()));
      expect(ids.every((id) => called.has(id))).toBe(true);
    } finally {
      await first?.kill();
      await second?.stop();
    }
  }, 300_000);

  it('two inference processes on one store: one scores a monitor at a time, so each call is judged once', async () => {
    const dir = newDataDir('monitors-two');
    const ch = await startSharedClickHouse(join(dir, 'clickhouse'));
    const file = join(dir, 'upstreams.json');
    writeFileSync(file, JSON.stringify({ upstreams: [{ name: 'judges', base_url: `${upstream.url}/vllm/v1`, models: [JUDGE] }] }));
    const env = { WEFT_UPSTREAMS_FILE: file, WEFT_MONITORS_INTERVAL_MS: '200', WEFT_RATE_LIMIT_MAX: '0', CLICKHOUSE_URL: ch.url };
    const Q = 'mon/two';
    const wefts: RunningWeft[] = [];
    try {
      wefts.push(await startWeft({ dataDir: join(dir, 'a'), env }));
      wefts.push(await startWeft({ dataDir: join(dir, 'b'), env }));
      const admin = new Client(wefts[0]!.url);
      const post = async (path: string, body: unknown) => {
        const r = await admin.post(path, body);
        if (r.status !== 200) throw new Error(`${path} → ${r.status} ${r.text}`);
        return r.body as Record<string, unknown>;
      };
      const judgedBefore = judged.length;
      await publishMonitor(post, { project: Q, op: 'twice', judgeModel: JUDGE });
      const ids = Array.from({ length: 400 }, (_, i) => `twice-${i}`);
      await post('/call/upsert_batch', endedCallsBatch(Q, 'twice', ids));
      const scored = async () =>
        ((await admin.post('/feedback/query', { project_id: Q, fields: ['weave_ref'], limit: 100_000 })).body.result as unknown[]).length;
      await expect.poll(scored, { timeout: 120_000, interval: 300 }).toBe(800);
      // Both processes looked the whole time; the judge was asked once per call.
      expect(judged.length - judgedBefore).toBe(400);
    } finally {
      for (const w of wefts) await w.stop();
      await ch.stop();
    }
  }, 300_000);
});
