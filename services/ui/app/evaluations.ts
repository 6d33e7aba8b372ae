import { post } from './api';
import { findRefs, parseRef } from './refs';
import type { Call } from './types';

/**
 * Evaluation runs as the Weave SDK writes them: an `Evaluation.evaluate` root call (inputs
 * `self` = the Evaluation object's ref, `model` = the model's ref; output = the summary, per
 * scorer), with one `Evaluation.predict_and_score` child per dataset row (inputs `example` = the
 * row, usually a ref into the dataset's table; output `{output, scores: {<scorer>: …}}`).
 */
export const evaluateOp = (projectId: string) => `weave:///${projectId}/op/Evaluation.evaluate:*`;

/** The op names of evaluation runs: the SDK's op refs, and the plain name weft's server-side runs of objects without op refs (replays) record. */
export const evaluateOps = (projectId: string) => [evaluateOp(projectId), 'Evaluation.evaluate'];
export const predictAndScoreOp = (projectId: string) => `weave:///${projectId}/op/Evaluation.predict_and_score:*`;

/** One metric of a summary or a score: its dotted path and value (booleans count as 1/0). */
export interface Metric {
  path: string;
  value: number;
  /** It was a boolean (shown as true/false). */
  bool?: boolean;
}

/** The numeric and boolean leaves of a value, depth-first, as dotted paths. */
export function metricLeaves(v: unknown, prefix = '', out: Metric[] = []): Metric[] {
  if (typeof v === 'number' && Number.isFinite(v)) out.push({ path: prefix, value: v });
  else if (typeof v === 'boolean') out.push({ path: prefix, value: v ? 1 : 0, bool: true });
  else if (v && typeof v === 'object' && !Array.isArray(v))
    for (const [k, x] of Object.entries(v)) metricLeaves(x, prefix ? `${prefix}.${k}` : k, out);
  return out;
}

/** The value at a dotted path (`correct.true_fraction`), as a number when it is one. */
export function valueAt(v: unknown, path: string): number | null {
  let cur = v;
  for (const k of path.split('.').filter(Boolean)) {
    if (!cur || typeof cur !== 'object') return null;
    cur = (cur as Record<string, unknown>)[k];
  }
  if (typeof cur === 'boolean') return cur ? 1 : 0;
  return typeof cur === 'number' && Number.isFinite(cur) ? cur : null;
}

/**
 * Whether more is better for a metric. Scores are taken as higher-is-better (Weave's default);
 * latency, cost and tokens are lower-is-better; the summary of the model's own output
 * (`output.…`) and counts of a run have no direction.
 */
export function direction(path: string): 'up' | 'down' | 'none' {
  if (/(^|\.)(model_latency|latency|cost|tokens)(\.|$)/.test(path)) return 'down';
  if (path === 'output' || path.startsWith('output.')) return 'none';
  return 'up';
}

/** Better, worse or the same as the baseline, in the metric's direction. */
export function verdict(path: string, baseline: number | null, value: number | null): 'better' | 'worse' | 'same' | 'none' {
  if (baseline === null || value === null) return 'none';
  if (value === baseline) return 'same';
  const d = direction(path);
  if (d === 'none') return 'none';
  return value > baseline === (d === 'up') ? 'better' : 'worse';
}

/** What a run's root call names, resolved from its refs. */
export interface EvalRun {
  call: Call;
  evaluationRef: string | null;
  evaluationName: string;
  modelRef: string | null;
  modelName: string;
  datasetRef: string | null;
  scorers: string[];
}

const str = (v: unknown) => (typeof v === 'string' ? v : null);
const refName = (ref: string | null) => (ref ? (parseRef(ref)?.name ?? ref) : '—');

/** Reads refs through /refs/read_batch (1,000 a request), returning ref → value. */
export async function readRefs(refs: string[], signal?: AbortSignal): Promise<Map<string, unknown>> {
  const unique = [...new Set(refs)];
  const out = new Map<string, unknown>();
  for (let i = 0; i < unique.length; i += 1000) {
    const batch = unique.slice(i, i + 1000);
    const { vals } = await post<{ vals: unknown[] }>('/refs/read_batch', { refs: batch }, signal);
    batch.forEach((r, j) => out.set(r, vals[j]));
  }
  return out;
}

/** Each root call with its evaluation's name, dataset and scorers and its model's name. */
export async function describeRuns(calls: Call[], signal?: AbortSignal): Promise<EvalRun[]> {
  const inputs = (c: Call) => (c.inputs ?? {}) as Record<string, unknown>;
  const refs = calls.flatMap((c) => [str(inputs(c).self), str(inputs(c).model)]).filter((r): r is string => !!r?.startsWith('weave:///'));
  const vals = refs.length ? await readRefs(refs, signal) : new Map<string, unknown>();
  return calls.map((call) => {
    const evaluationRef = str(inputs(call).self);
    const modelRef = str(inputs(call).model);
    const evaluation = (evaluationRef ? vals.get(evaluationRef) : null) as Record<string, unknown> | null;
    const model = (modelRef ? vals.get(modelRef) : null) as Record<string, unknown> | null;
    const scorers = Array.isArray(evaluation?.scorers) ? evaluation.scorers.map((s) => refName(str(s) ?? JSON.stringify(s))) : [];
    return {
      call,
      evaluationRef,
      evaluationName: str(evaluation?.evaluation_name) ?? str(evaluation?.name) ?? refName(evaluationRef),
      modelRef,
      modelName: str(model?.name) ?? str(model?._class_name) ?? refName(modelRef),
      datasetRef: str(evaluation?.dataset),
      scorers,
    };
  });
}

/** The summary metrics of a run's output worth a column: every leaf but the model output's. */
export function summaryMetrics(output: unknown): Metric[] {
  return metricLeaves(output).filter((m) => direction(m.path) !== 'none');
}

/**
 * The key examples are matched by across runs: the dataset row's digest when the example is a
 * ref into a dataset's rows (`…/attr/rows/id/<digest>`; the same row in two versions of a
 * dataset has one digest), the ref itself for other refs, else the example's content.
 */
export function exampleKey(example: unknown): string {
  if (typeof example === 'string' && example.startsWith('weave:///')) {
    const m = /\/id\/([^/]+)$/.exec(example);
    return m ? `row:${m[1]}` : `ref:${example}`;
  }
  return `value:${stableJson(example)}`;
}

/** JSON with object keys sorted, so equal content gives one string. */
export function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (v && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

/** One run's result on one example: its predict_and_score call, output and score leaves. */
export interface ExampleResult {
  call: Call;
  /** The output, its refs resolved to their values. */
  output: unknown;
  /** The output as stored, when it held refs. */
  rawOutput?: unknown;
  scores: Metric[];
  trials: number;
}

/** One dataset row and every run's result on it (null: that run has no result for it). */
export interface ExampleRow {
  key: string;
  example: unknown;
  results: (ExampleResult | null)[];
}

/**
 * The per-example table: predict_and_score calls grouped by example across runs, in the order
 * the baseline met them (then the examples only other runs have). With several trials, the
 * first is shown and the count kept.
 */
export function exampleRows(runIds: string[], children: Call[]): ExampleRow[] {
  const rows = new Map<string, ExampleRow>();
  const ordered = [...children].sort((a, b) => a.started_at.localeCompare(b.started_at));
  const byRun = runIds.map((id) => ordered.filter((c) => c.parent_id === id));
  byRun.forEach((calls, r) => {
    for (const call of calls) {
      const example = (call.inputs as Record<string, unknown> | null)?.example;
      const key = exampleKey(example);
      let row = rows.get(key);
      if (!row) {
        row = { key, example, results: runIds.map(() => null) };
        rows.set(key, row);
      }
      const seen = row.results[r];
      if (seen) {
        seen.trials++;
        continue;
      }
      const out = (call.output ?? {}) as Record<string, unknown>;
      row.results[r] = { call, output: out.output, scores: metricLeaves(out.scores), trials: 1 };
    }
  });
  return [...rows.values()];
}

/** Whether a run scored worse than the baseline (run 0) on any score of this example. */
export function isRegression(row: ExampleRow, run: number): boolean {
  const base = row.results[0];
  const mine = row.results[run];
  if (!base || !mine) return false;
  return mine.scores.some((s) => verdict(s.path, base.scores.find((b) => b.path === s.path)?.value ?? null, s.value) === 'worse');
}

/** The refs inside the runs' outputs (a model that returns a dataset's value returns its ref). */
export function outputRefs(rows: ExampleRow[]): string[] {
  const out = new Set<string>();
  for (const row of rows) for (const r of row.results) if (r) for (const ref of findRefs(r.output, 20)) out.add(ref);
  return [...out];
}

/** `v` with every ref string that `values` holds replaced by its value (the trace view's Refs panel reads them so). */
export function resolveRefs(v: unknown, values: Map<string, unknown>): unknown {
  if (typeof v === 'string') return values.has(v) ? values.get(v) : v;
  if (Array.isArray(v)) return v.map((x) => resolveRefs(x, values));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, resolveRefs(x, values)]));
  return v;
}

/** Each result's output with its refs resolved (`rawOutput`: the output as stored). */
export function withResolvedOutputs(rows: ExampleRow[], values: Map<string, unknown>): ExampleRow[] {
  if (values.size === 0) return rows;
  return rows.map((row) => ({
    ...row,
    results: row.results.map((r) => (r ? { ...r, rawOutput: r.output, output: resolveRefs(r.output, values) } : r)),
  }));
}
