import type { EvaluationStatus, RouteRequestOf } from '@weft/api';
import { ApiError, badRequest, type Caller, inLane, type Logger } from '@weft/core';
import { RawJson } from '@weft/digest';
import type { CallIngest } from '@weft/ingest';
import { callRef, createObject, createTable, parseRef, queryTableRows, readObject, resolveRefs } from '@weft/objects';
import {
  buildUsageCostQuery,
  callProgress,
  CallsQueryPlan,
  callStartAndEnded,
  matchedCallsOldestFirst,
  traceCalls,
  type TraceCallRow,
  type UsageEntry,
} from '@weft/query';
import { PeriodicWorker } from '@weft/runtime';
import type { Store } from '@weft/store';
import { EvaluationRegistry, runId, type RunKey } from './evaluation-registry';
import { LlmCall } from './llm-call';
import { completeStructured, readScorers, runScorer, type ScoreResult, type Scorer, type StructuredModel } from './scorers';
import type { UpstreamRegistry } from './upstreams';

/** Rows (dataset rows × trials) one evaluation may run: they are read into memory at the request. */
export const MAX_EVALUATION_ROWS = 10_000;
/** Rows run at once (each waits on the model, then on its judges). */
const ROW_CONCURRENCY = 4;

const PREDICT_AND_SCORE = 'Evaluation.predict_and_score';

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
  weft?: { evaluate_model?: { total_rows?: unknown; max_cost_usd?: unknown } };
}

/** One predict_and_score's output, as the SDK's Evaluation.predict_and_score returns it. */
interface RowResult {
  output: unknown;
  scores: Record<string, unknown>;
  model_latency: number;
}

interface Example {
  row: Record<string, unknown>;
  /** `<dataset ref>/attr/rows/id/<row digest>`, as the SDK's inputs name it. */
  ref: string;
}

/** What a row interrupted by a stop or crash had done: its predict_and_score call, the model's answer and the scores stored. */
interface UnfinishedRow {
  example: Example;
  pasId: string;
  predict: { output: unknown; model?: string; usage?: unknown } | null;
  scores: Map<string, ScoreResult>;
}

interface Run {
  key: RunKey;
  caller: Caller;
  evaluationRef: string;
  modelRef: string;
  evaluation: EvaluationVal;
  model: StructuredModel & { name?: unknown };
  scorers: Scorer[];
  examples: Example[];
  /** Stop starting rows once the run's model and judge requests have cost this much (USD). */
  maxCostUsd: number | null;
  spentUsd: number;
  /** Who cancelled the run, once somebody has. */
  cancelledBy: string | null;
}

/**
 * Server-side evaluations (`/evaluations/evaluate_model`, `/evaluations/status`,
 * `/evaluations/cancel`): an Evaluation object's dataset run through an
 * LLMStructuredCompletionModel and its scorers here, recorded as the call tree the SDK's
 * `Evaluation.evaluate` makes (evaluate → predict_and_score per row → the model's predict and a
 * call per scorer; then summarize), so the UI and the SDK read it as any evaluation. The status
 * is read back from those calls, so any inference process answers it.
 *
 * Runs survive their process: each is registered with a heartbeat (evaluation-registry.ts); a
 * run whose process stopped or died is taken up by the next process that looks, which reads
 * the run's calls and finishes only what is missing: finished rows are kept, an interrupted row
 * keeps the model answer and scores it already stored, so no request is made twice.
 */
export class EvaluationRuns {
  private readonly running = new Map<string, { run: Run; done: Promise<void> }>();
  private readonly registry: EvaluationRegistry;
  private readonly heartbeat: PeriodicWorker;
  private stopping = false;

  constructor(
    private readonly store: Store,
    private readonly upstreams: UpstreamRegistry,
    private readonly ingest: CallIngest,
    private readonly log: Logger,
    private readonly opts: { heartbeatMs: number; caughtUp?: () => Promise<void> },
  ) {
    this.registry = new EvaluationRegistry(store, opts.heartbeatMs);
    this.heartbeat = new PeriodicWorker(() => this.tick(), {
      name: 'evaluations',
      intervalMs: opts.heartbeatMs,
      firstPassMs: 0,
      log,
      failure: { level: 'error', message: 'evaluate_model: heartbeat failed; tried again at the next one' },
    });
  }

  private get caughtUp() {
    return this.opts.caughtUp;
  }

  /** Heartbeats, cancellations made elsewhere, and runs left by a stopped process: now, then every heartbeat. */
  start(): void {
    this.heartbeat.start();
  }

  /** Reads and checks both objects and the dataset (a 4xx names the field), records the root call, and runs the rows in the background. */
  async evaluateModel(req: RouteRequestOf<'evaluationsEvaluateModel'>, caller: Caller): Promise<{ call_id: string }> {
    const evaluation = (await this.readRef(req.project_id, req.evaluation_ref, 'evaluation_ref')) as EvaluationVal;
    if (evaluation._class_name !== 'Evaluation')
      throw badRequest(`evaluation_ref: not an Evaluation object (its class is ${String(evaluation._class_name)})`, 'evaluation_ref');
    const model = await this.readModel(req.project_id, req.model_ref);
    const examples = await this.readExamples(req.project_id, evaluation);
    const scorers = await this.readScorers(req.project_id, evaluation);
    const maxCostUsd = req.max_cost_usd ?? null;
    if (maxCostUsd !== null) await this.checkPriced(req.project_id, model, scorers);

    // Recorded before answering (the SDK's eager_call_start): status finds the run at once.
    const root = LlmCall.begin(this.ingest, {
      projectId: req.project_id,
      caller,
      opName: opName(evaluation.evaluate, 'Evaluation.evaluate'),
      inputs: { self: req.evaluation_ref, model: req.model_ref },
      attributes: {
        _weave_eval_meta: { evaluate_model_worker: true },
        weft: { evaluate_model: { total_rows: examples.length, ...(maxCostUsd !== null ? { max_cost_usd: maxCostUsd } : {}) } },
      },
      displayName: displayName(evaluation, model),
    });
    await root.publishStart();
    const run: Run = {
      key: { project_id: req.project_id, call_id: root.id },
      caller,
      evaluationRef: req.evaluation_ref,
      modelRef: req.model_ref,
      evaluation,
      model,
      scorers,
      examples,
      maxCostUsd,
      spentUsd: 0,
      cancelledBy: null,
    };
    await this.registry.beat([run.key]);
    this.launch(run, root, { results: [], unfinished: [], remaining: examples });
    return { call_id: root.id };
  }

  /**
   * Batch replay: the calls a filter matches (oldest first) become a Dataset — each row the
   * call's inputs, its `original_output` and its `source_call` ref — and an Evaluation of that
   * dataset with the scorers, published as the SDK publishes them, then run as evaluate_model
   * runs one: an ordinary evaluation the UI lists and compares.
   */
  async replay(
    req: RouteRequestOf<'evaluationsReplay'>,
    caller: Caller,
  ): Promise<{ call_id: string; dataset_ref: string; evaluation_ref: string }> {
    await this.readModel(req.project_id, req.model_ref);
    for (const r of req.scorer_refs)
      if (parseRef(r)?.projectId !== req.project_id)
        throw badRequest(`scorer_refs: not an object of project ${req.project_id}: ${JSON.stringify(r)}`, 'scorer_refs');
    const scorers = await readScorers(this.store, req.scorer_refs);
    if (scorers.length !== req.scorer_refs.length) throw badRequest('scorer_refs: a scorer ref names no object', 'scorer_refs');
    await this.caughtUp?.();
    const plan = new CallsQueryPlan({
      project_id: req.project_id,
      filter: req.filter,
      query: req.query,
      sort_by: [{ field: 'started_at', direction: 'asc' }],
    });
    const calls = await matchedCallsOldestFirst<{ id: string; inputs_dump: string | null; output_dump: string | null }>(
      this.store,
      plan,
      ['inputs_dump', 'output_dump', 'started_at'],
      { limit: req.limit },
      'evaluations.replay_calls',
    );
    if (calls.length === 0) throw badRequest('filter: no call matches: nothing to replay', 'filter');
    const rows = calls.map((c) => {
      const inputs = c.inputs_dump ? (JSON.parse(c.inputs_dump) as unknown) : {};
      return {
        ...(isDict(inputs) ? inputs : { inputs }),
        original_output: c.output_dump ? (JSON.parse(c.output_dump) as unknown) : null,
        source_call: callRef(req.project_id, c.id),
      };
    });
    const table = await createTable(this.store, req.project_id, rows);
    const name = req.name ?? `replay-${table.digest.slice(0, 12)}`;
    const objectVal = (cls: string, members: Record<string, unknown>) => ({
      _type: cls,
      name,
      description: null,
      ...members,
      _class_name: cls,
      _bases: ['Object', 'BaseModel'],
    });
    const dataset = await createObject(
      this.store,
      {
        project_id: req.project_id,
        object_id: name,
        val: objectVal('Dataset', { rows: `weave:///${req.project_id}/table/${table.digest}` }),
      },
      caller.userId,
    );
    const datasetRef = `weave:///${req.project_id}/object/${name}:${dataset.digest}`;
    const evaluation = await createObject(
      this.store,
      {
        project_id: req.project_id,
        object_id: `${name}-evaluation`,
        val: objectVal('Evaluation', {
          dataset: datasetRef,
          scorers: req.scorer_refs,
          preprocess_model_input: null,
          trials: 1,
          metadata: null,
          evaluation_name: name,
        }),
      },
      caller.userId,
    );
    const evaluationRef = `weave:///${req.project_id}/object/${name}-evaluation:${evaluation.digest}`;
    const { call_id } = await this.evaluateModel(
      { project_id: req.project_id, evaluation_ref: evaluationRef, model_ref: req.model_ref, max_cost_usd: req.max_cost_usd },
      caller,
    );
    return { call_id, dataset_ref: datasetRef, evaluation_ref: evaluationRef };
  }

  /**
   * Cancels a run: no row starts after it, the rows under way end, and the root ends failed
   * ("cancelled by …"). The process running it hears of it at once (here) or at its next
   * heartbeat (another process); a run no live process holds is ended here.
   */
  async cancel(req: RouteRequestOf<'evaluationsCancel'>, caller: Caller): Promise<{ status: EvaluationStatus }> {
    const before = await this.status(req);
    if (before.status.code !== 'running') return before;
    const key = { project_id: req.project_id, call_id: req.call_id };
    await this.registry.cancel(key, caller.userId);
    const local = this.running.get(runId(key));
    if (local) {
      local.run.cancelledBy = caller.userId;
      await local.done;
    } else {
      const holder = await this.registry.owns(key);
      if (!holder || !holder.fresh) {
        const root = await this.readRoot(key);
        if (root) {
          await LlmCall.existing(this.ingest, { projectId: key.project_id, id: key.call_id, traceId: root.traceId }).end({
            output: null,
            exception: exception(cancelledMessage(caller.userId)),
          });
          await this.registry.beat([key], 'done');
        }
      }
    }
    return this.status(req);
  }

  /**
   * At a stop: no run starts another row; the rows under way end, and each unfinished run is
   * left registered as interrupted, so the next process to start takes it up at once.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.heartbeat.stop();
    await Promise.all([...this.running.values()].map((r) => r.done));
  }

  async status(req: { project_id: string; call_id: string }): Promise<{ status: EvaluationStatus }> {
    // The run's calls may be acknowledged but not stored yet (the all-in-one's ingest log).
    await this.caughtUp?.();
    const row = await callProgress(this.store, req.project_id, req.call_id, PREDICT_AND_SCORE);
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

  /** One heartbeat: this process's runs marked alive, cancellations read, stale runs taken up. */
  private async tick(): Promise<void> {
    const mine = [...this.running.values()].map((r) => r.run);
    await this.registry.beat(mine.map((r) => r.key));
    const cancelled = await this.registry.cancelled(mine.map((r) => r.key));
    for (const run of mine) run.cancelledBy ??= cancelled.get(runId(run.key)) ?? null;
    for (const key of await this.registry.stale()) {
      if (this.stopping) break;
      if (this.running.has(runId(key))) continue;
      if (await this.registry.claim(key)) await this.resume(key);
    }
  }

  /** Runs a run's rows in the background; its end (or failure) is recorded on its root. */
  private launch(run: Run, root: LlmCall, state: { results: RowResult[]; unfinished: UnfinishedRow[]; remaining: Example[] }): void {
    // Background lane, whoever asked for it: the request that started the run does not own it.
    const done = inLane('background', () => this.execute(run, root, state))
      .catch(async (err: unknown) => {
        this.log.error({ err, call_id: root.id }, 'evaluate_model: the run failed');
        await root.end({ output: null, exception: exception(err instanceof Error ? err.message : String(err)) }).catch(() => {});
        await this.registry.beat([run.key], 'done').catch(() => {});
      })
      .finally(() => this.running.delete(runId(run.key)));
    this.running.set(runId(run.key), { run, done });
  }

  /** Takes up a run another process left: its finished rows kept, its interrupted rows finished, the rest run. */
  private async resume(key: RunKey): Promise<void> {
    await this.caughtUp?.();
    const root = await this.readRoot(key);
    if (!root || root.ended) {
      await this.registry.beat([key], 'done');
      return;
    }
    const rootCall = LlmCall.existing(this.ingest, { projectId: key.project_id, id: key.call_id, traceId: root.traceId });
    const caller: Caller = { userId: root.userId, keyId: 'evaluate_model', isAdmin: false, entities: [] };
    const cancelledBy = (await this.registry.cancelled([key])).get(runId(key));
    if (cancelledBy) {
      await rootCall.end({ output: null, exception: exception(cancelledMessage(cancelledBy)) });
      await this.registry.beat([key], 'done');
      return;
    }
    const evaluation = (await this.readRef(key.project_id, root.evaluationRef, 'evaluation_ref')) as EvaluationVal;
    const model = await this.readModel(key.project_id, root.modelRef);
    const examples = await this.readExamples(key.project_id, evaluation);
    const scorers = await this.readScorers(key.project_id, evaluation);
    const run: Run = {
      key,
      caller,
      evaluationRef: root.evaluationRef,
      modelRef: root.modelRef,
      evaluation,
      model,
      scorers,
      examples,
      maxCostUsd: root.maxCostUsd,
      spentUsd: 0,
      cancelledBy: null,
    };
    const state = await this.storedProgress(run, root.traceId);
    this.log.info(
      { call_id: key.call_id, project: key.project_id, finished: state.results.length, interrupted: state.unfinished.length },
      'evaluate_model: taking up a run a stopped process left',
    );
    this.launch(run, rootCall, state);
  }

  /** The root call of a run, as resume needs it; null when there is none. */
  private async readRoot(key: RunKey) {
    const row = await callStartAndEnded(this.store, key.project_id, key.call_id);
    if (!row) return null;
    const inputs = (row.inputs_dump ? JSON.parse(row.inputs_dump) : {}) as { self?: unknown; model?: unknown };
    const attrs = (row.attributes_dump ? JSON.parse(row.attributes_dump) : {}) as RootAttributes;
    const cap = attrs.weft?.evaluate_model?.max_cost_usd;
    return {
      traceId: row.trace_id,
      ended: Number(row.ended) > 0,
      evaluationRef: String(inputs.self ?? ''),
      modelRef: String(inputs.model ?? ''),
      userId: row.svc_user_id ?? 'evaluate_model',
      maxCostUsd: typeof cap === 'number' ? cap : null,
    };
  }

  /** What the run's stored calls say it has done: finished rows, interrupted rows and what they kept, the examples not started; the cost so far. */
  private async storedProgress(run: Run, traceId: string) {
    const calls = await traceCalls(this.store, run.key.project_id, traceId, 'evaluations.progress');
    const json = (s: string | null) => (s ? (JSON.parse(s) as unknown) : null);
    const inputsOf = (c: TraceCallRow) => (json(c.inputs_dump) ?? {}) as Record<string, unknown>;
    const byRef = new Map<string, Example>(run.examples.map((e) => [e.ref, e]));
    const rows = calls.filter((c) => c.parent_id === run.key.call_id && (c.op_name ?? '').includes(PREDICT_AND_SCORE));
    const results: RowResult[] = [];
    const unfinished: UnfinishedRow[] = [];
    const startedPerRef = new Map<string, number>();
    for (const pas of rows) {
      const ref = String(inputsOf(pas).example ?? '');
      const example = byRef.get(ref);
      if (!example) continue;
      startedPerRef.set(ref, (startedPerRef.get(ref) ?? 0) + 1);
      if (pas.ended) {
        results.push(json(pas.output_dump) as RowResult);
        continue;
      }
      const children = calls.filter((c) => c.parent_id === pas.id && c.ended);
      const predictCall = children.find((c) => inputsOf(c).self === run.modelRef && !c.exception);
      const scores = new Map<string, ScoreResult>();
      for (const c of children) {
        const self = inputsOf(c).self;
        if (typeof self === 'string' && run.scorers.some((s) => s.ref === self))
          scores.set(self, c.exception ? { error: exceptionMessage(c.exception) } : { output: json(c.output_dump) });
      }
      unfinished.push({ example, pasId: pas.id, predict: predictCall ? { output: json(predictCall.output_dump) } : null, scores });
    }
    // Each example runs as often as the dataset lists it (trials): those not started yet.
    const remaining: Example[] = [];
    const seen = new Map<string, number>();
    for (const e of run.examples) {
      const n = (seen.get(e.ref) ?? 0) + 1;
      seen.set(e.ref, n);
      if (n > (startedPerRef.get(e.ref) ?? 0)) remaining.push(e);
    }
    const entries = calls.flatMap((c) => usageEntries((json(c.summary_dump) as { usage?: unknown } | null)?.usage));
    run.spentUsd = await this.costOf(run.key.project_id, entries);
    return { results, unfinished, remaining };
  }

  private async execute(run: Run, root: LlmCall, state: { results: RowResult[]; unfinished: UnfinishedRow[]; remaining: Example[] }) {
    const results = [...state.results];
    const queue: (Example | UnfinishedRow)[] = [...state.unfinished, ...state.remaining];
    let next = 0;
    const overBudget = () => run.maxCostUsd !== null && run.spentUsd >= run.maxCostUsd;
    const worker = async () => {
      while (next < queue.length && !this.stopping && !run.cancelledBy && !overBudget()) {
        const item = queue[next++]!;
        results.push(await this.predictAndScore(run, root, item));
      }
    };
    await Promise.all(Array.from({ length: Math.min(ROW_CONCURRENCY, queue.length) }, worker));
    const total = run.examples.length;
    if (run.cancelledBy) {
      await root.end({
        output: null,
        exception: exception(`${cancelledMessage(run.cancelledBy)} after ${results.length} of ${total} rows`),
      });
      await this.registry.beat([run.key], 'done');
      return;
    }
    if (next < queue.length && overBudget()) {
      const spent = run.spentUsd.toFixed(6);
      await root.end({
        output: null,
        exception: exception(
          `cost cap reached: $${spent} spent of max_cost_usd $${run.maxCostUsd} after ${results.length} of ${total} rows`,
        ),
      });
      await this.registry.beat([run.key], 'done');
      return;
    }
    // Stopping: the run stays registered, its heartbeat old, and the next process takes it up.
    if (next < queue.length) {
      await this.registry.beat([run.key], 'interrupted');
      return;
    }
    const summarize = this.child(run, root, opName(run.evaluation.summarize, 'Evaluation.summarize'), { self: run.evaluationRef });
    const summary = summarizeEvaluation(
      results,
      run.scorers.map((s) => s.name),
    );
    await summarize.end({ output: summary });
    await root.end({ output: summary });
    await this.registry.beat([run.key], 'done');
  }

  /**
   * One row: the model's predict (its failure ends the row without scores, as the SDK's
   * ApplyModelError), then every scorer at once. An interrupted row keeps its predict_and_score
   * call, and the answer and scores it had stored.
   */
  private async predictAndScore(run: Run, root: LlmCall, item: Example | UnfinishedRow): Promise<RowResult> {
    const unfinished = 'pasId' in item ? item : null;
    const example = unfinished ? unfinished.example : (item as Example);
    const pas = unfinished
      ? LlmCall.existing(this.ingest, { projectId: run.key.project_id, id: unfinished.pasId, traceId: root.traceId })
      : this.child(run, root, opName(run.evaluation.predict_and_score, PREDICT_AND_SCORE), {
          self: run.evaluationRef,
          model: run.modelRef,
          example: example.ref,
        });
    // Visible while it runs: a row a crash interrupts is found and finished, not run again.
    await pas.publishStart();
    let answer: { output: unknown; model?: string; usage?: unknown } | { error: string };
    let model_latency = 0;
    if (unfinished?.predict) answer = unfinished.predict;
    else {
      // The row's columns fill the messages template's {fields} (the SDK records **template_vars under its name).
      const predict = this.child(run, pas, 'LLMStructuredCompletionModel.predict', { self: run.modelRef, template_vars: example.row });
      const started = performance.now();
      answer = await completeStructured(this.upstreams, run.model, example.row);
      model_latency = (performance.now() - started) / 1000;
      if ('error' in answer) await predict.end({ output: null, exception: exception(answer.error) });
      else {
        await predict.end({ output: answer.output, model: answer.model, usage: answer.usage });
        await this.spend(run, answer.model, answer.usage);
      }
    }
    if ('error' in answer) {
      const result = { output: null, scores: {}, model_latency };
      await pas.end({ output: result });
      return result;
    }
    const output = answer.output;
    const scored = await Promise.all(
      run.scorers.map(async (s) => {
        const kept = unfinished?.scores.get(s.ref);
        if (kept) return kept;
        const call = this.child(
          run,
          pas,
          opName(s.val.score, `${String(s.val._class_name)}.score`),
          { self: s.ref, output, kwargs: example.row },
          { weave: { kind: 'scorer' } },
        );
        const r = await runScorer(this.store, this.upstreams, s, output, example.row);
        await call.end(
          'error' in r ? { output: null, exception: exception(r.error) } : { output: r.output, model: r.model, usage: r.usage },
        );
        if (!('error' in r)) await this.spend(run, r.model, r.usage);
        return r;
      }),
    );
    // A scorer that failed has no score in the row (the summary counts the row as unscored by it).
    const scores: Record<string, unknown> = {};
    scored.forEach((r, i) => {
      if (!('error' in r)) scores[run.scorers[i]!.name] = r.output;
    });
    const result = { output, scores, model_latency };
    await pas.end({ output: result });
    return result;
  }

  /** Adds a model request's cost to the run's spend (only a capped run prices its requests). */
  private async spend(run: Run, model: string | undefined, usage: unknown): Promise<void> {
    if (run.maxCostUsd === null || !model) return;
    const cost = await this.costOf(run.key.project_id, usageEntries({ [model]: usage }));
    run.spentUsd += cost;
  }

  private async costOf(projectId: string, entries: UsageEntry[]): Promise<number> {
    if (entries.length === 0) return 0;
    const q = buildUsageCostQuery(projectId, entries);
    const row = await this.store.row<{ cost: number | null }>(q.sql, q.params, { name: 'evaluations.cost' });
    return Number(row?.cost ?? 0);
  }

  /** A capped run must be priceable: every model it asks (the model's, the LLM judges') needs a price. */
  private async checkPriced(projectId: string, model: StructuredModel, scorers: Scorer[]): Promise<void> {
    const models = [String(model.llm_model_id)];
    for (const s of scorers) {
      if (s.val._class_name !== 'LLMAsAJudgeScorer') continue;
      const [m] = await resolveRefs(this.store, [String(s.val.model)], JSON.parse);
      const id = (m?.status === 'ok' ? (m.value as StructuredModel | null) : null)?.llm_model_id;
      if (typeof id === 'string') models.push(id);
    }
    for (const id of models) {
      const bare = this.upstreams.find(id) ? id : id.replace(/^[^/]+\//, '');
      const q = buildUsageCostQuery(projectId, [{ model: bare, prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }]);
      const row = await this.store.row<{ unpriced: number | string }>(q.sql, q.params, { name: 'evaluations.priced' });
      if (Number(row?.unpriced ?? 1) > 0)
        throw badRequest(
          `max_cost_usd: model ${bare} has no price, so the run's cost cannot be counted (add one with /cost/create, or leave max_cost_usd out)`,
          'max_cost_usd',
        );
    }
  }

  private child(run: Run, parent: LlmCall, op: string, inputs: Record<string, unknown>, attributes: Record<string, unknown> = {}): LlmCall {
    return LlmCall.begin(this.ingest, {
      projectId: run.key.project_id,
      caller: run.caller,
      opName: op,
      inputs,
      traceId: parent.traceId,
      parentId: parent.id,
      attributes: { ...attributes, _weave_eval_meta: { evaluate_model_worker: true, declarative: true } },
    });
  }

  private async readModel(projectId: string, ref: string): Promise<StructuredModel & { name?: unknown }> {
    const model = (await this.readRef(projectId, ref, 'model_ref')) as StructuredModel & { _class_name?: unknown; name?: unknown };
    if (model._class_name !== 'LLMStructuredCompletionModel')
      throw badRequest(
        `model_ref: weft runs LLMStructuredCompletionModel objects only (this one's class is ${String(model._class_name)})`,
        'model_ref',
      );
    if (typeof model.llm_model_id !== 'string' || !model.llm_model_id)
      throw badRequest('model_ref: the model names no llm_model_id', 'model_ref');
    return model;
  }

  private async readScorers(projectId: string, evaluation: EvaluationVal): Promise<Scorer[]> {
    const scorerRefs = Array.isArray(evaluation.scorers) ? evaluation.scorers : [];
    // Another project's objects are not read on this project's behalf.
    for (const r of scorerRefs)
      if (typeof r !== 'string' || parseRef(r)?.projectId !== projectId)
        throw badRequest(`evaluation_ref: a scorer is not an object of project ${projectId}: ${JSON.stringify(r)}`, 'evaluation_ref');
    return readScorers(this.store, scorerRefs);
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
  private async readExamples(projectId: string, evaluation: EvaluationVal): Promise<Example[]> {
    const datasetRef = typeof evaluation.dataset === 'string' ? evaluation.dataset : null;
    const [dataset] = datasetRef ? await resolveRefs(this.store, [datasetRef], JSON.parse) : [];
    const rowsRef = dataset?.status === 'ok' ? (dataset.value as { rows?: unknown } | null)?.rows : null;
    const table = typeof rowsRef === 'string' ? parseRef(rowsRef) : null;
    if (datasetRef && parseRef(datasetRef)?.projectId !== projectId)
      throw badRequest(`evaluation_ref: the dataset is not an object of project ${projectId}`, 'evaluation_ref');
    if (!datasetRef || !table || table.kind !== 'table' || table.projectId !== projectId)
      throw badRequest('evaluation_ref: the Evaluation names no readable Dataset (a dataset ref whose rows are a table)', 'evaluation_ref');
    const trials = typeof evaluation.trials === 'number' && evaluation.trials >= 1 ? Math.floor(evaluation.trials) : 1;
    const rows: Example[] = [];
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

/** A `summary.usage` (by model) as priced entries. */
function usageEntries(usage: unknown): UsageEntry[] {
  if (typeof usage !== 'object' || usage === null) return [];
  return Object.entries(usage as Record<string, Record<string, unknown> | null>).flatMap(([model, u]) => {
    if (!u || typeof u !== 'object') return [];
    const n = (k: string) => (typeof u[k] === 'number' ? (u[k] as number) : 0);
    const prompt = n('prompt_tokens') || n('input_tokens');
    const completion = n('completion_tokens') || n('output_tokens');
    return [{ model, prompt_tokens: prompt, completion_tokens: completion, total_tokens: n('total_tokens') || prompt + completion }];
  });
}

const cancelledMessage = (by: string) => `cancelled by ${by}`;

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
