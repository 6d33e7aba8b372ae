import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, loadConfig } from '@weft/core';
import { basicAuth, HARNESS_API_KEY } from '@weft/harness';
import type { Weft } from '@weft/runtime';
import type { Store } from '@weft/store';
import { createWeft } from '../services/all-in-one/src/app';
import { readAlertRule, type AlertRule } from '../services/query/src/alerts/alert-spec';
import { ALERTS_PER_STATEMENT, LAST_CALLS_LOOKS, measure, measureAll, type Measure } from '../services/query/src/alerts/measure';
import { newDataDir } from './helpers/server';

/**
 * The alert worker's batched pass (measure.ts measureAll: many alerts per statement) gives every
 * alert the figure its own statement gives (measure): a mixed set of alerts — every aggregation,
 * window_size, window_duration, both and neither, op scopes with `:*` and exact versions, status
 * matches, the per-call figures, monitors' scores — measured both ways over the same data.
 */
const P = 'batch/mixed';
const op = (name: string, v: string) => `weave:///${P}/op/${name}:${v}`;
let weft: Weft;
let url: string;
const headers = { authorization: basicAuth(HARNESS_API_KEY), 'content-type': 'application/json' };

async function post(path: string, body: unknown): Promise<any> {
  const res = await fetch(url + path, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${path} → ${res.status} ${text}`);
  return JSON.parse(text);
}

/** A deterministic mix: values, strings, booleans, nulls, missing paths, errors, usage, ties of end times. */
function callsOf(n: number, nowMs: number) {
  const ops = [op('a', 'v1'), op('a', 'v2'), op('b', 'v1'), op('c', 'v1')];
  const batch: unknown[] = [];
  for (let i = 0; i < n; i++) {
    const id = `call-${String(i).padStart(4, '0')}`;
    // Spread over the last two hours; every fifth call ends in the same microsecond as the one before.
    const endMs = nowMs - 7_200_000 + Math.floor((i * 7_200_000) / n) - (i % 5 === 4 ? 7_200_000 / n : 0);
    const startMs = endMs - ((i * 37) % 900) - 1;
    const score = i % 11 === 0 ? 'n/a' : i % 13 === 0 ? null : ((i * 7919) % 1000) / 1000;
    const output: Record<string, unknown> = { tag: ['x', 'y', 'z'][i % 3], flag: i % 4 === 0 };
    if (i % 17 !== 0) output.score = score;
    batch.push({
      mode: 'start',
      req: {
        start: {
          project_id: P,
          id,
          trace_id: id,
          op_name: ops[i % ops.length],
          started_at: new Date(startMs).toISOString(),
          inputs: { n: i % 9 === 0 ? String(i) : i },
          attributes: {},
        },
      },
    });
    if (i % 23 === 22) continue; // running: in no window
    batch.push({
      mode: 'end',
      req: {
        end: {
          project_id: P,
          id,
          ended_at: new Date(endMs).toISOString(),
          output,
          summary:
            i % 3 === 0
              ? { usage: { 'gpt-4o': { requests: 1, prompt_tokens: 10 + i, completion_tokens: i % 7, total_tokens: 10 + i + (i % 7) } } }
              : {},
          ...(i % 6 === 1 ? { exception: JSON.stringify({ type: 'ValueError', message: 'boom' }) } : {}),
        },
      },
    });
  }
  return { batch };
}

beforeAll(async () => {
  const config = loadConfig({
    WEFT_DATA_DIR: newDataDir('alerts-batch'),
    LOG_LEVEL: 'silent',
    WEFT_OTLP_GRPC_PORT: '0',
    PORT: '0',
    HOST: '127.0.0.1',
    WEFT_ALERTS_INTERVAL_MS: '0',
    WEFT_BOOTSTRAP_API_KEY: HARNESS_API_KEY,
  });
  weft = await createWeft(config, createLogger('silent', { mode: 'test' }));
  await weft.app.listen({ port: 0, host: '127.0.0.1' });
  url = `http://127.0.0.1:${(weft.app.server.address() as { port: number }).port}`;
  const nowMs = Date.now();
  await post('/call/upsert_batch', callsOf(600, nowMs));
  // A monitor's scores (as its worker writes them: trigger_ref a version of the monitor, runnable_ref of the scorer).
  const monitorRef = (m: string, v: string) => `weave:///${P}/object/${m}:${v}`;
  for (let i = 0; i < 120; i++) {
    const scorer = i % 3 ? 'helpful' : 'json';
    await post('/feedback/create', {
      project_id: P,
      weave_ref: `weave:///${P}/call/call-${String(i).padStart(4, '0')}`,
      feedback_type: `wandb.runnable.${scorer}`,
      payload: { output: { score: ((i * 31) % 100) / 100, ok: i % 3 !== 0, label: ['good', 'bad'][i % 2] } },
      trigger_ref: monitorRef(i % 2 ? 'judge' : 'check', i % 4 < 2 ? 'v1' : 'v2'),
      runnable_ref: monitorRef(scorer, 'v1'),
    });
  }
  // A read waits for the writes acknowledged before it (the ingest log): the calls are stored.
  expect((await post('/calls/query_stats', { project_id: P })).count).toBe(600);
}, 180_000);
afterAll(async () => {
  await weft?.close();
});

/** The mixed set of alerts, as AlertSpec values read into rules. */
function rules(): AlertRule[] {
  const scopes: (string[] | null)[] = [null, [`weave:///${P}/op/a:*`], [op('a', 'v1')], [`weave:///${P}/op/a:*`, op('b', 'v1')]];
  const windows: Record<string, unknown>[] = [
    { window_size: 1 },
    { window_size: 7 },
    { window_size: 120 },
    { window_size: 100_000 },
    { window_duration: 600 },
    { window_duration: 3600 },
    { window_duration: 86_400 },
    { window_size: 20, window_duration: 3600 },
    {},
  ];
  const figures: Record<string, unknown>[] = [
    { metric_path: 'output.score', aggregation_function: 'mean' },
    { metric_path: 'output.score', aggregation_function: 'median' },
    { metric_path: 'output.score', aggregation_function: 'min' },
    { metric_path: 'output.score', aggregation_function: 'max' },
    { metric_path: 'output.score', aggregation_function: 'mode' },
    { metric_path: 'output.score', weft_aggregation: 'p95' },
    { metric_path: 'output.score', aggregation_function: 'count' },
    { metric_path: 'output.flag', aggregation_function: 'percentage' },
    { metric_path: 'output.tag', aggregation_function: 'percentage', status_match_value: 'x' },
    { metric_path: 'output.tag', aggregation_function: 'count', status_match_value: 'y' },
    { aggregation_function: 'percentage', status_match_value: 'error' },
    { aggregation_function: 'count', status_match_value: '2' },
    { metric_path: 'latency', weft_aggregation: 'p90' },
    { metric_path: 'latency_ms', aggregation_function: 'median' },
    { metric_path: 'tokens', weft_aggregation: 'sum' },
    { metric_path: 'cost', weft_aggregation: 'sum' },
    { metric_path: 'cost', aggregation_function: 'max' },
    { metric_path: 'error', aggregation_function: 'mean' },
    { metric_path: 'inputs.n', aggregation_function: 'mode' },
    { metric_path: 'inputs.n', weft_aggregation: 'p50' },
  ];
  const monitors: Record<string, unknown>[] = [
    { monitor_ref: `weave:///${P}/object/judge:latest` },
    { monitor_ref: `weave:///${P}/object/judge:v1`, scorer_ref: `weave:///${P}/object/helpful:v1` },
    { monitor_ref: `weave:///${P}/object/check:latest`, scorer_ref: `weave:///${P}/object/json:latest` },
  ];
  const scoreFigures: Record<string, unknown>[] = [
    { metric_path: 'output.score', aggregation_function: 'mean' },
    { metric_path: 'score', weft_aggregation: 'p90' },
    { metric_path: 'ok', aggregation_function: 'percentage' },
    { metric_path: 'label', aggregation_function: 'count', status_match_value: 'good' },
    { metric_path: 'score', aggregation_function: 'mode' },
  ];
  const vals: { op_scope: string[] | null; spec: Record<string, unknown> }[] = [];
  // Every figure with every window, the scopes in turn; then every score figure over every monitor and window.
  figures.forEach((f, i) => windows.forEach((w, j) => vals.push({ op_scope: scopes[(i + j) % scopes.length]!, spec: { ...f, ...w } })));
  for (const m of monitors)
    for (const f of scoreFigures) for (const w of windows) vals.push({ op_scope: null, spec: { ...m, ...f, ...w } });
  return vals.map((v, i) => {
    const read = readAlertRule(P, `alert-${i}`, `d${i}`, {
      op_scope: v.op_scope,
      spec: { comparison_operator: 'GREATER_THAN', threshold: 0, aggregation_function: 'mean', ...v.spec },
    });
    if (!read.ok) throw new Error(`alert ${i} (${JSON.stringify(v)}): ${read.reason}`);
    return read.rule;
  });
}

/** The store, counting the statements it runs by name. */
function counting(store: Store): { store: Store; names: string[] } {
  const names: string[] = [];
  const proxy = new Proxy(store, {
    get(target, key, receiver) {
      const value: unknown = Reflect.get(target, key, receiver);
      if (key !== 'rows' && key !== 'row') return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
      return (sql: string, params?: unknown, opts?: { name?: string }) => {
        names.push(opts?.name ?? '?');
        return (value as (...a: unknown[]) => unknown).call(target, sql, params, opts);
      };
    },
  });
  return { store: proxy, names };
}

describe('alerts: a pass measures many alerts per statement', () => {
  it('every figure equals the one-alert statement’s, in a statement per project, source kind and window kind', async () => {
    const all = rules();
    expect(all.length).toBeGreaterThan(300);
    const nowMs = Date.now();
    const { store, names } = counting(weft.store);
    // Looking back in steps whatever the project's size (by default a project this small is read whole).
    const batched = await measureAll(store, all, nowMs, undefined, undefined, 0);
    const single = new Map<AlertRule, Measure>();
    for (const rule of all) single.set(rule, await measure(weft.store, rule, nowMs));

    let nonEmpty = 0;
    for (const rule of all) {
      const got = batched.get(rule);
      if (got instanceof Error) throw got;
      const want = single.get(rule)!;
      expect({ alert: rule.name, spec: rule.aggregation, ...got }).toEqual({ alert: rule.name, spec: rule.aggregation, ...want });
      if (want.calls > 0) nonEmpty++;
    }
    // Most windows hold something: the comparison is not of empty windows.
    expect(nonEmpty).toBeGreaterThan(all.length * 0.8);
    // One statement per project, source kind and window kind (ALERTS_PER_STATEMENT alerts at most each), none alone;
    // the last-N alerts on calls once more per look-back span their window is not yet held in (a 100,000-call window never is).
    const statements = (['calls', 'monitor'] as const)
      .flatMap((kind) => [true, false].map((sized) => all.filter((r) => r.source.kind === kind && (r.windowSize !== null) === sized)))
      .reduce((n, group) => n + Math.ceil(group.length / ALERTS_PER_STATEMENT), 0);
    expect(statements).toBeGreaterThanOrEqual(4);
    const sizedCallBatches = Math.ceil(all.filter((r) => r.source.kind === 'calls' && r.windowSize !== null).length / ALERTS_PER_STATEMENT);
    const batchStatements = names.filter((n) => n === 'alerts.measure_batch').length;
    expect(batchStatements).toBeGreaterThan(statements);
    expect(batchStatements).toBeLessThanOrEqual(statements + LAST_CALLS_LOOKS * sizedCallBatches);
    expect(names.filter((n) => n === 'alerts.measure')).toHaveLength(0);
  }, 180_000);
});
