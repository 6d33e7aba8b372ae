import { callCost, callStatus, latencyMs } from './format';
import { findRefs, parseRef } from './ref-uri';
import type { Call } from './types';

/**
 * The evaluation comparison's model: pure (no DOM, no fetch), so the compare view and the query
 * role's `/evaluations/export` (services/query evaluation-export.ts) compute the same values.
 *
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

/** Reads refs: ref → value (a ref it cannot read is left out). */
export type ReadRefs = (refs: string[]) => Promise<Map<string, unknown>>;

/** Each root call with its evaluation's name, dataset and scorers and its model's name. */
export async function describeRunsWith(calls: Call[], readRefs: ReadRefs): Promise<EvalRun[]> {
  const inputs = (c: Call) => (c.inputs ?? {}) as Record<string, unknown>;
  const refs = calls.flatMap((c) => [str(inputs(c).self), str(inputs(c).model)]).filter((r): r is string => !!r?.startsWith('weave:///'));
  const vals = refs.length ? await readRefs(refs) : new Map<string, unknown>();
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

/**
 * The refs inside the runs' outputs (a model that returns a dataset's value returns its ref):
 * object and op refs, the ones /refs/read_batch reads (a table or call ref stays as it is).
 */
export function outputRefs(rows: ExampleRow[]): string[] {
  const out = new Set<string>();
  for (const row of rows)
    for (const r of row.results)
      if (r) for (const ref of findRefs(r.output, 20)) if (/^(object|op)$/.test(parseRef(ref)?.kind ?? '')) out.add(ref);
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

/** The predict_and_score calls read for one comparison; past it the comparison says it is cut. */
export const MAX_EXAMPLE_CALLS = 10_000;

/** Where a comparison reads its calls and refs: the view over HTTP, the export from the store. */
export interface ComparisonSource {
  /** The runs' root calls, by id, with their costs (any order; unknown ids left out). */
  roots(ids: string[]): Promise<Call[]>;
  /** The `predict_and_score` children of those roots, oldest first, at most `limit`. */
  children(rootIds: string[], limit: number): Promise<Call[]>;
  readRefs: ReadRefs;
}

/** 2–4 runs compared: the runs (in the order asked, the first the baseline) and every example. */
export interface Comparison {
  runs: EvalRun[];
  rows: ExampleRow[];
  /** Ref → value of the refs read: the dataset rows (the examples) and the outputs' refs. */
  examples: Map<string, unknown>;
  /** MAX_EXAMPLE_CALLS were read: there may be more. */
  cut: boolean;
}

/** Reads a comparison: the runs found among `ids`, their examples, every ref in them read. */
export async function loadComparison(ids: string[], source: ComparisonSource): Promise<Comparison> {
  const roots = await source.roots(ids);
  const found = ids.map((id) => roots.find((c) => c.id === id)).filter((c): c is Call => !!c);
  const runs = await describeRunsWith(found, source.readRefs);
  const children = found.length
    ? await source.children(
        found.map((c) => c.id),
        MAX_EXAMPLE_CALLS,
      )
    : [];
  const stored = exampleRows(
    found.map((c) => c.id),
    children,
  );
  // Dataset rows are refs into the dataset's table: read them to show the inputs. Outputs may be
  // refs too (a model returning a dataset's value returns its ref): read them to show the values.
  const refs = stored.map((r) => r.example).filter((e): e is string => typeof e === 'string' && e.startsWith('weave:///'));
  const wanted = [...refs, ...outputRefs(stored)];
  const values = wanted.length ? await source.readRefs(wanted) : new Map<string, unknown>();
  const rows = withResolvedOutputs(stored, values);
  return { runs, rows, examples: values, cut: children.length >= MAX_EXAMPLE_CALLS };
}

/** The examples a view shows: all, or those where a run scored worse than the baseline. */
export function shownRows(c: Comparison, regressionsOnly: boolean): ExampleRow[] {
  return regressionsOnly ? c.rows.filter((r) => r.results.some((_, i) => i > 0 && isRegression(r, i))) : c.rows;
}

/** An example's inputs as the view shows them: the dataset row read through its ref. */
export function exampleValue(c: Comparison, row: ExampleRow): unknown {
  return typeof row.example === 'string' && c.examples.has(row.example) ? c.examples.get(row.example) : row.example;
}

/** A metric's value as exported: a boolean as a boolean. */
const metricValue = (m: Metric): number | boolean => (m.bool ? m.value === 1 : m.value);

/** One run as the export describes it: who, what, and the summary the view compares. */
export interface ExportedRun {
  run: number;
  baseline: boolean;
  call_id: string;
  trace_id: string;
  display_name: string | null;
  model: string;
  model_ref: string | null;
  evaluation: string;
  evaluation_ref: string | null;
  dataset_ref: string | null;
  scorers: string[];
  status: string;
  /** The summary metrics by dotted path (the root call's output, the model's own output summary aside). */
  summary: Record<string, number | boolean>;
  latency_ms: number | null;
  cost_usd: number | null;
}

/** One run's result on one example, as exported (null in `results`: that run has none). */
export interface ExportedResult {
  run: number;
  call_id: string;
  trace_id: string;
  /** The output, its refs resolved to their values (what the view shows). */
  output: unknown;
  /** The output as stored, when it held refs (else absent). */
  output_stored?: unknown;
  scores: Record<string, number | boolean>;
  trials: number;
  /** A score worse than the baseline's (never for the baseline itself). */
  regressed: boolean;
  exception: string | null;
}

export interface ExportedExample {
  key: string;
  /** The dataset row, read through its ref. */
  example: unknown;
  /** The example as stored when it is a ref (the dataset row's), else null. */
  example_ref: string | null;
  results: (ExportedResult | null)[];
}

/** The whole comparison as one document (the JSON export). */
export interface ExportedComparison {
  runs: ExportedRun[];
  examples: ExportedExample[];
  regressions_only: boolean;
  /** Only the first MAX_EXAMPLE_CALLS results were read. */
  cut: boolean;
}

export function exportedComparison(c: Comparison, regressionsOnly: boolean): ExportedComparison {
  const runs = c.runs.map((r, i): ExportedRun => ({
    run: i,
    baseline: i === 0,
    call_id: r.call.id,
    trace_id: r.call.trace_id,
    display_name: r.call.display_name ?? null,
    model: r.modelName,
    model_ref: r.modelRef,
    evaluation: r.evaluationName,
    evaluation_ref: r.evaluationRef,
    dataset_ref: r.datasetRef,
    scorers: r.scorers,
    status: callStatus(r.call),
    summary: Object.fromEntries(summaryMetrics(r.call.output).map((m) => [m.path, metricValue(m)])),
    latency_ms: latencyMs(r.call),
    cost_usd: callCost(r.call),
  }));
  const examples = shownRows(c, regressionsOnly).map((row): ExportedExample => ({
    key: row.key,
    example: exampleValue(c, row) ?? null,
    example_ref: typeof row.example === 'string' && row.example.startsWith('weave:///') ? row.example : null,
    results: row.results.map((r, i) =>
      r
        ? {
            run: i,
            call_id: r.call.id,
            trace_id: r.call.trace_id,
            output: r.output ?? null,
            ...(r.rawOutput !== undefined && stableJson(r.rawOutput) !== stableJson(r.output) ? { output_stored: r.rawOutput } : {}),
            scores: Object.fromEntries(r.scores.map((m) => [m.path, metricValue(m)])),
            trials: r.trials,
            regressed: i > 0 && isRegression(row, i),
            exception: r.call.exception ?? null,
          }
        : null,
    ),
  }));
  return { runs, examples, regressions_only: regressionsOnly, cut: c.cut };
}

/**
 * The comparison as rows (CSV, JSONL, Parquet): one per example and run, the baseline's first —
 * the run's identity, the example, the output (refs resolved), the output as stored when it held
 * refs, each score, trials and whether it regressed. A run with no result on an example has a
 * row with no call.
 */
export interface ExportedRow {
  example_key: string;
  example: unknown;
  example_ref: string | null;
  run: number;
  baseline: boolean;
  model: string;
  evaluation_call_id: string;
  call_id: string | null;
  trace_id: string | null;
  output: unknown;
  output_stored: unknown;
  scores: Record<string, number | boolean>;
  trials: number;
  regressed: boolean;
  exception: string | null;
}

export function exportedRows(doc: ExportedComparison): ExportedRow[] {
  return doc.examples.flatMap((e) =>
    doc.runs.map((run, i): ExportedRow => {
      const r = e.results[i] ?? null;
      return {
        example_key: e.key,
        example: e.example,
        example_ref: e.example_ref,
        run: run.run,
        baseline: run.baseline,
        model: run.model,
        evaluation_call_id: run.call_id,
        call_id: r?.call_id ?? null,
        trace_id: r?.trace_id ?? null,
        output: r ? r.output : null,
        output_stored: r?.output_stored ?? null,
        scores: r?.scores ?? {},
        trials: r?.trials ?? 0,
        regressed: r?.regressed ?? false,
        exception: r?.exception ?? null,
      };
    }),
  );
}

/** The score paths of the rows, in the order first met (a column each in CSV and Parquet). */
export function scorePaths(rows: ExportedRow[]): string[] {
  const out = new Set<string>();
  for (const r of rows) for (const p of Object.keys(r.scores)) out.add(p);
  return [...out];
}

/** The keys of the examples that are objects (a column each: `example.<key>`), in the order first met. */
export function exampleKeys(rows: ExportedRow[]): { keys: string[]; others: boolean } {
  const keys = new Set<string>();
  let others = false;
  for (const r of rows) {
    if (r.example && typeof r.example === 'object' && !Array.isArray(r.example)) for (const k of Object.keys(r.example)) keys.add(k);
    else others = true;
  }
  return { keys: [...keys], others };
}
