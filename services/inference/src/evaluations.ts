import type { EvaluationStatus, RouteRequestOf } from '@weft/api';
import { badRequest, type Caller, type Logger } from '@weft/core';
import type { CallIngest } from '@weft/ingest';
import type { Store } from '@weft/store';
import { EvaluationBudget } from './evaluation-budget';
import { EvaluationExecutor } from './evaluation-executor';
import { EvaluationObjects } from './evaluation-objects';
import { EvaluationProgress } from './evaluation-progress';
import { EvaluationRegistry } from './evaluation-registry';
import { replayCalls } from './evaluation-replay';
import { opName, type EvaluationVal, type Run } from './evaluation-run';
import { EvaluationScheduler } from './evaluation-scheduler';
import { LlmCall } from './llm-call';
import type { UpstreamRegistry } from './upstreams';

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
 *
 * This class is the routes' entrance; each responsibility is a part of its own: the objects a
 * run reads (evaluation-objects.ts), its cost cap (evaluation-budget.ts, its SQL in libs/query
 * costs.ts), its rows' execution (evaluation-executor.ts), which runs this process holds and
 * when (evaluation-scheduler.ts, over evaluation-registry.ts), a run's state read back from its
 * calls (evaluation-progress.ts), and batch replay (evaluation-replay.ts).
 */
export class EvaluationRuns {
  private readonly registry: EvaluationRegistry;
  private readonly objects: EvaluationObjects;
  private readonly budget: EvaluationBudget;
  private readonly progress: EvaluationProgress;
  private readonly scheduler: EvaluationScheduler;

  constructor(
    private readonly store: Store,
    upstreams: UpstreamRegistry,
    private readonly ingest: CallIngest,
    log: Logger,
    private readonly opts: { heartbeatMs: number; caughtUp?: () => Promise<void> },
  ) {
    this.registry = new EvaluationRegistry(store, opts.heartbeatMs);
    this.objects = new EvaluationObjects(store);
    this.budget = new EvaluationBudget(store, upstreams);
    this.progress = new EvaluationProgress(store, this.budget, opts.caughtUp);
    const executor = new EvaluationExecutor({
      store,
      upstreams,
      ingest,
      registry: this.registry,
      budget: this.budget,
      stopping: () => this.scheduler.isStopping,
    });
    this.scheduler = new EvaluationScheduler({
      ingest,
      log,
      registry: this.registry,
      objects: this.objects,
      progress: this.progress,
      executor,
      heartbeatMs: opts.heartbeatMs,
      caughtUp: opts.caughtUp,
    });
  }

  /** Heartbeats, cancellations made elsewhere, and runs left by a stopped process: now, then every heartbeat. */
  start(): void {
    this.scheduler.start();
  }

  /** Reads and checks both objects and the dataset (a 4xx names the field), records the root call, and runs the rows in the background. */
  async evaluateModel(req: RouteRequestOf<'evaluationsEvaluateModel'>, caller: Caller): Promise<{ call_id: string }> {
    const evaluation = (await this.objects.readRef(req.project_id, req.evaluation_ref, 'evaluation_ref')) as EvaluationVal;
    if (evaluation._class_name !== 'Evaluation')
      throw badRequest(`evaluation_ref: not an Evaluation object (its class is ${String(evaluation._class_name)})`, 'evaluation_ref');
    const model = await this.objects.readModel(req.project_id, req.model_ref);
    const examples = await this.objects.readExamples(req.project_id, evaluation);
    const scorers = await this.objects.readScorers(req.project_id, evaluation);
    const maxCostUsd = req.max_cost_usd ?? null;
    if (maxCostUsd !== null) await this.budget.checkPriced(req.project_id, model, scorers);

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
    this.scheduler.launch(run, root, { results: [], unfinished: [], remaining: examples });
    return { call_id: root.id };
  }

  /** Batch replay (evaluation-replay.ts): the calls a filter matches, run as an evaluation of a dataset made of them. */
  replay(
    req: RouteRequestOf<'evaluationsReplay'>,
    caller: Caller,
  ): Promise<{ call_id: string; dataset_ref: string; evaluation_ref: string }> {
    const deps = { store: this.store, objects: this.objects, caughtUp: this.opts.caughtUp };
    return replayCalls(deps, req, caller, (r, c) => this.evaluateModel(r, c));
  }

  /**
   * Cancels a run: no row starts after it, the rows under way end, and the root ends failed
   * ("cancelled by …"). The process running it hears of it at once (here) or at its next
   * heartbeat (another process); a run no live process holds is ended here.
   */
  cancel(req: RouteRequestOf<'evaluationsCancel'>, caller: Caller): Promise<{ status: EvaluationStatus }> {
    return this.scheduler.cancel(req, caller);
  }

  /**
   * At a stop: no run starts another row; the rows under way end, and each unfinished run is
   * left registered as interrupted, so the next process to start takes it up at once.
   */
  stop(): Promise<void> {
    return this.scheduler.stop();
  }

  status(req: { project_id: string; call_id: string }): Promise<{ status: EvaluationStatus }> {
    return this.progress.status(req);
  }
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
