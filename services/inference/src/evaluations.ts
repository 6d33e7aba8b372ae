import type { EvaluationStatus, RouteRequestOf } from '@weft/api';
import { ApiError, badRequest, type Caller, type Logger } from '@weft/core';
import { RawJson } from '@weft/digest';
import type { CallIngest } from '@weft/ingest';
import { parseRef, queryTableRows, readObject, resolveRefs } from '@weft/objects';
import { Params } from '@weft/query';
import type { Store } from '@weft/store';
import { LlmCall } from './llm-call';
import { completeStructured, readScorers, runScorer, type Scorer, type StructuredModel } from './scorers';
import type { UpstreamRegistry } from './upstreams';

/** Rows (dataset rows × trials) one evaluation may run: they are read into memory at the request. */
export const MAX_EVALUATION_ROWS = 10_000;
/** Rows run at once (each waits on the model, then on its judges). */
const ROW_CONCURRENCY = 4;

/** The stored Evaluation members weft reads. */
interface EvaluationVal {
  _class_name?: unknown;
  name?: unknown;
  evaluation_name?: unknown;
  dataset?: unknown;
  scorers?: unknown;
  trials?: unknown;
  evaluate?: unknown;
  predict_and_score?: unknown;
  summarize?: unknown;
}

/** What the root call's attributes say of the run. */
interface RootAttributes {
  _weave_eval_meta?: { evaluate_model_worker?: unknown };
  weft?: { evaluate_model?: { total_rows?: unknown } };
}

/** One predict_and_score's output, as the SDK's Evaluation.predict_and_score returns it. */
interface RowResult {
  output: unknown;
  scores: Record<string, unknown>;
  model_latency: number;
}

interface Run {
  projectId: string;
  caller: Caller;
  evaluationRef: string;
  modelRef: string;
  evaluation: EvaluationVal;
  model: StructuredModel & { name?: unknown };
  scorers: Scorer[];
  /** Each example: the row's value and its ref (`<dataset ref>/attr/rows/id/<row digest>`), as the SDK's inputs name it. */
  examples: { row: Record<string, unknown>; ref: string }[];
}

/**
 * Server-side evaluations (`/evaluations/evaluate_model`, `/evaluations/status`): an Evaluation
 * object's dataset run through an LLMStructuredCompletionModel and its scorers here, recorded as
 * the call tree the SDK's `Evaluation.evaluate` makes (evaluate → predict_and_score per row →
 * the model's predict and a call per scorer; then summarize), so the UI and the SDK read it as
 * any evaluation. The status is read back from those calls, so any inference process answers it.
 */
export class EvaluationRuns {
  private readonly running = new Set<Promise<void>>();
  private stopping = false;

  constructor(
    private readonly store: Store,
    private readonly upstreams: UpstreamRegistry,
    private readonly ingest: CallIngest,
    private readonly log: Logger,
    private readonly caughtUp?: () => Promise<void>,
  ) {}

  /** Reads and checks both objects and the dataset (a 4xx names the field), records the root call, and runs the rows in the background. */
  async evaluateModel(req: RouteRequestOf<'evaluationsEvaluateModel'>, caller: Caller): Promise<{ call_id: string }> {
    const evaluation = (await this.readRef(req.project_id, req.evaluation_ref, 'evaluation_ref')) as EvaluationVal;
    if (evaluation._class_name !== 'Evaluation')
      throw badRequest(`evaluation_ref: not an Evaluation object (its class is ${String(evaluation._class_name)})`, 'evaluation_ref');
    const model = (await this.readRef(req.project_id, req.model_ref, 'model_ref')) as StructuredModel & {
      _class_name?: unknown;
      name?: unknown;
    };
    if (model._class_name !== 'LLMStructuredCompletionModel')
      throw badRequest(
        `model_ref: weft runs LLMStructuredCompletionModel objects only (this one's class is ${String(model._class_name)})`,
        'model_ref',
      );
    if (typeof model.llm_model_id !== 'string' || !model.llm_model_id)
      throw badRequest('model_ref: the model names no llm_model_id', 'model_ref');
    const examples = await this.readExamples(req.project_id, evaluation);
    const scorerRefs = Array.isArray(evaluation.scorers) ? evaluation.scorers : [];
    // Another project's objects are not read on this project's behalf.
    for (const r of scorerRefs)
      if (typeof r !== 'string' || parseRef(r)?.projectId !== req.project_id)
        throw badRequest(`evaluation_ref: a scorer is not an object of project ${req.project_id}: ${JSON.stringify(r)}`, 'evaluation_ref');
    const scorers = await readScorers(this.store, scorerRefs);
    const run: Run = {
      projectId: req.project_id,
      caller,
      evaluationRef: req.evaluation_ref,
      modelRef: req.model_ref,
      evaluation,
      model,
      scorers,
      examples,
    };

    // Recorded before answering (the SDK's eager_call_start): status finds the run at once.
    const root = LlmCall.begin(this.ingest, {
      projectId: req.project_id,
      caller,
      opName: opName(evaluation.evaluate, 'Evaluation.evaluate'),
      inputs: { self: req.evaluation_ref, model: req.model_ref },
      attributes: { _weave_eval_meta: { evaluate_model_worker: true }, weft: { evaluate_model: { total_rows: examples.length } } },
      displayName: displayName(evaluation, model),
    });
    await root.publishStart();
    const p = this.run(run, root)
      .catch(async (err: unknown) => {
        this.log.error({ err, call_id: root.id }, 'evaluate_model: the run failed');
        await root.end({ output: null, exception: exception(err instanceof Error ? err.message : String(err)) }).catch(() => {});
      })
      .finally(() => this.running.delete(p));
    this.running.add(p);
    return { call_id: root.id };
  }

  /**
   * At a stop: no run starts another row; the rows under way end, and each run's root ends
   * failed, saying so (a run is not resumed after a restart yet).
   */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all([...this.running]);
  }

  async status(req: RouteRequestOf<'evaluationsStatus'>): Promise<{ status: EvaluationStatus }> {
    // The run's calls may be acknowledged but not stored yet (the all-in-one's ingest log).
    await this.caughtUp?.();
    const p = new Params();
    const pid = p.str(req.project_id);
    const id = p.str(req.call_id);
    const rs = await this.store.client.query({
      query: `SELECT s.attributes_dump AS attributes_dump, e.ended AS ended, e.output_dump AS output_dump, e.exception AS exception,
          (SELECT count() FROM (SELECT c.id FROM calls_starts AS c FINAL
             WHERE c.project_id = ${pid} AND c.parent_id = ${id} AND position(ifNull(c.op_name, ''), 'Evaluation.predict_and_score') > 0
               AND c.id IN (SELECT id FROM calls_ends WHERE project_id = ${pid}))) AS completed
        FROM (SELECT id, attributes_dump FROM calls_starts FINAL WHERE project_id = ${pid} AND id = ${id}) AS s
        LEFT JOIN (SELECT id, 1 AS ended, output_dump, exception FROM calls_ends FINAL WHERE project_id = ${pid} AND id = ${id}) AS e ON e.id = s.id
        SETTINGS join_use_nulls = 1`,
      query_params: p.values,
      format: 'JSONEachRow',
    });
    const [row] = await rs.json<{
      attributes_dump: string | null;
      ended: number | null;
      output_dump: string | null;
      exception: string | null;
      completed: string | number;
    }>();
    const attrs = row?.attributes_dump ? (JSON.parse(row.attributes_dump) as RootAttributes) : null;
    // Only the root of a server-side run has a status; any other call is not one.
    // (its rows carry the worker's eval meta too; only the root carries the run's row count).
    if (!row || attrs?._weave_eval_meta?.evaluate_model_worker !== true || typeof attrs.weft?.evaluate_model?.total_rows !== 'number')
      return { status: { code: 'not_found' } };
    if (!row.ended) {
      const total = Number(attrs.weft?.evaluate_model?.total_rows ?? 0);
      return { status: { code: 'running', completed_rows: Math.min(Number(row.completed), total), total_rows: total } };
    }
    if (row.exception) return { status: { code: 'failed', error: exceptionMessage(row.exception) } };
    const output = row.output_dump ? (JSON.parse(row.output_dump) as unknown) : {};
    return {
      status: { code: 'complete', output: typeof output === 'object' && output !== null ? (output as Record<string, unknown>) : {} },
    };
  }

  private async run(run: Run, root: LlmCall): Promise<void> {
    const results: RowResult[] = new Array<RowResult>(run.examples.length);
    let next = 0;
    const worker = async () => {
      while (next < run.examples.length && !this.stopping) {
        const i = next++;
        results[i] = await this.predictAndScore(run, root, run.examples[i]!);
      }
    };
    await Promise.all(Array.from({ length: Math.min(ROW_CONCURRENCY, run.examples.length) }, worker));
    if (next < run.examples.length)
      throw new Error(`interrupted by a server stop after ${next} of ${run.examples.length} rows (runs are not resumed)`);

    const summarize = this.child(run, root, opName(run.evaluation.summarize, 'Evaluation.summarize'), { self: run.evaluationRef });
    const summary = summarizeEvaluation(
      results,
      run.scorers.map((s) => s.name),
    );
    await summarize.end({ output: summary });
    await root.end({ output: summary });
  }

  /** One row: the model's predict (its failure ends the row without scores, as the SDK's ApplyModelError), then every scorer at once. */
  private async predictAndScore(run: Run, root: LlmCall, example: { row: Record<string, unknown>; ref: string }): Promise<RowResult> {
    const pas = this.child(run, root, opName(run.evaluation.predict_and_score, 'Evaluation.predict_and_score'), {
      self: run.evaluationRef,
      model: run.modelRef,
      example: example.ref,
    });
    // The row's columns fill the messages template's {fields} (the SDK records **template_vars under its name).
    const predict = this.child(run, pas, 'LLMStructuredCompletionModel.predict', { self: run.modelRef, template_vars: example.row });
    const started = performance.now();
    const answer = await completeStructured(this.upstreams, run.model, example.row);
    const model_latency = (performance.now() - started) / 1000;
    if ('error' in answer) {
      await predict.end({ output: null, exception: exception(answer.error) });
      const result = { output: null, scores: {}, model_latency };
      await pas.end({ output: result });
      return result;
    }
    await predict.end({ output: answer.output, model: answer.model, usage: answer.usage });
    const scored = await Promise.all(
      run.scorers.map(async (s) => {
        const call = this.child(
          run,
          pas,
          opName(s.val.score, `${String(s.val._class_name)}.score`),
          { self: s.ref, output: answer.output, kwargs: example.row },
          { weave: { kind: 'scorer' } },
        );
        const r = await runScorer(this.store, this.upstreams, s, answer.output, example.row);
        await call.end('error' in r ? { output: null, exception: exception(r.error) } : { output: r.output });
        return r;
      }),
    );
    // A scorer that failed has no score in the row (the summary counts the row as unscored by it).
    const scores: Record<string, unknown> = {};
    scored.forEach((r, i) => {
      if (!('error' in r)) scores[run.scorers[i]!.name] = r.output;
    });
    const result = { output: answer.output, scores, model_latency };
    await pas.end({ output: result });
    return result;
  }

  private child(run: Run, parent: LlmCall, op: string, inputs: Record<string, unknown>, attributes: Record<string, unknown> = {}): LlmCall {
    return LlmCall.begin(this.ingest, {
      projectId: run.projectId,
      caller: run.caller,
      opName: op,
      inputs,
      traceId: parent.traceId,
      parentId: parent.id,
      attributes: { ...attributes, _weave_eval_meta: { evaluate_model_worker: true, declarative: true } },
    });
  }

  /** The object a request's ref names, as plain values: a 400 naming the field when it is no object ref of the project. */
  private async readRef(projectId: string, ref: string, field: string): Promise<Record<string, unknown>> {
    const parsed = parseRef(ref);
    if (!parsed || parsed.kind !== 'object' || parsed.extra.length > 0) throw badRequest(`${field}: not an object ref: '${ref}'`, field);
    if (parsed.projectId !== projectId)
      throw badRequest(`${field}: ref project '${parsed.projectId}' does not match project_id '${projectId}'`, field);
    let obj;
    try {
      obj = await readObject(this.store, { project_id: projectId, object_id: parsed.name, digest: parsed.version });
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) throw new ApiError(404, `${field}: no object ${ref}`, { field });
      throw e;
    }
    const val = obj.val instanceof RawJson ? (JSON.parse(obj.val.text) as unknown) : obj.val;
    if (typeof val !== 'object' || val === null || Array.isArray(val)) throw badRequest(`${field}: not an object value: '${ref}'`, field);
    return val as Record<string, unknown>;
  }

  /** The dataset's rows (its `rows` table), each `trials` times, with their refs. */
  private async readExamples(projectId: string, evaluation: EvaluationVal): Promise<Run['examples']> {
    const datasetRef = typeof evaluation.dataset === 'string' ? evaluation.dataset : null;
    const [dataset] = datasetRef ? await resolveRefs(this.store, [datasetRef], JSON.parse) : [];
    const rowsRef = dataset?.status === 'ok' ? (dataset.value as { rows?: unknown } | null)?.rows : null;
    const table = typeof rowsRef === 'string' ? parseRef(rowsRef) : null;
    if (datasetRef && parseRef(datasetRef)?.projectId !== projectId)
      throw badRequest(`evaluation_ref: the dataset is not an object of project ${projectId}`, 'evaluation_ref');
    if (!datasetRef || !table || table.kind !== 'table' || table.projectId !== projectId)
      throw badRequest('evaluation_ref: the Evaluation names no readable Dataset (a dataset ref whose rows are a table)', 'evaluation_ref');
    const trials = typeof evaluation.trials === 'number' && evaluation.trials >= 1 ? Math.floor(evaluation.trials) : 1;
    const rows: Run['examples'] = [];
    for await (const r of queryTableRows(this.store, { project_id: table.projectId, digest: table.digest })) {
      if (rows.length * trials >= MAX_EVALUATION_ROWS)
        throw badRequest(
          `evaluation_ref: the dataset has more than ${MAX_EVALUATION_ROWS / trials} rows (at most ${MAX_EVALUATION_ROWS} rows × trials run)`,
          'evaluation_ref',
        );
      const row = JSON.parse(r.val.text) as unknown;
      rows.push({
        row: typeof row === 'object' && row !== null && !Array.isArray(row) ? (row as Record<string, unknown>) : { row },
        ref: `${datasetRef}/attr/rows/id/${r.digest}`,
      });
    }
    if (rows.length === 0) throw badRequest('evaluation_ref: the dataset has no rows', 'evaluation_ref');
    return Array.from({ length: trials }, () => rows).flat();
  }
}

/** An op member of the object (the op ref the SDK published with it), else the op's plain name. */
function opName(member: unknown, name: string): string {
  return typeof member === 'string' && member.startsWith('weave:///') ? member : name;
}

function displayName(evaluation: EvaluationVal, model: { name?: unknown }): string {
  const label =
    typeof evaluation.evaluation_name === 'string' && evaluation.evaluation_name
      ? evaluation.evaluation_name
      : typeof model.name === 'string' && model.name
        ? model.name
        : 'model';
  return `eval-${new Date().toISOString().slice(0, 10)}-${label}`;
}

/** An exception as the SDK stores one (its UI and ours show `RuntimeError: message`). */
function exception(message: string): string {
  return JSON.stringify({ type: 'RuntimeError', message, traceback: [] });
}

function exceptionMessage(stored: string): string {
  try {
    const e = JSON.parse(stored) as { message?: unknown };
    if (typeof e.message === 'string') return e.message;
  } catch {
    // not the SDK's JSON: the text as it is
  }
  return stored;
}

const isDict = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Evaluation.summarize: each scorer's column summarized (Scorer.summarize's auto_summarize; a
 * row without the scorer's score counts as unscored), then the other columns (output,
 * model_latency) where auto_summarize finds something to say.
 */
export function summarizeEvaluation(rows: RowResult[], scorerNames: string[]): Record<string, unknown> {
  const summary: Record<string, unknown> = {};
  const out = autoSummarize(rows.map((r) => r.output));
  if (out && Object.keys(out).length > 0) summary.output = out;
  for (const name of scorerNames) summary[name] = autoSummarize(rows.map((r) => (name in r.scores ? r.scores[name] : {})));
  const latency = autoSummarize(rows.map((r) => r.model_latency));
  if (latency && Object.keys(latency).length > 0) summary.model_latency = latency;
  return summary;
}

/** The SDK's auto_summarize: booleans → true_count/true_fraction, numbers → mean, dicts member by member; `{}` marks an unscored row. */
export function autoSummarize(data: unknown[]): Record<string, unknown> | null {
  if (data.length === 0) return {};
  const scored = data.filter((x) => !isDict(x) || Object.keys(x).length > 0);
  return summarizeColumn(scored, data.length - scored.length);
}

function summarizeColumn(all: unknown[], unscored: number): Record<string, unknown> | null {
  const data = all.filter((x) => x !== null && x !== undefined);
  if (data.length === 0) return null;
  const first = data[0];
  if (typeof first === 'boolean') {
    const trueCount = data.filter(Boolean).length;
    return { true_count: trueCount, true_fraction: trueCount / (data.length + unscored) };
  }
  if (typeof first === 'number') return { mean: (data as number[]).reduce((a, b) => a + Number(b), 0) / data.length };
  if (isDict(first)) {
    const result: Record<string, unknown> = {};
    const keys = [...new Set(data.filter(isDict).flatMap((d) => Object.keys(d)))];
    for (const k of keys) {
      const s = summarizeColumn(
        data.filter(isDict).map((d) => d[k]),
        unscored,
      );
      if (s === null) continue;
      if (k in s) Object.assign(result, s);
      else result[k] = s;
    }
    return Object.keys(result).length > 0 ? result : null;
  }
  return null;
}
