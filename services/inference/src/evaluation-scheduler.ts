import type { EvaluationStatus } from '@weft/api';
import { type Caller, inLane, type Logger } from '@weft/core';
import type { CallIngest } from '@weft/ingest';
import { PeriodicWorker } from '@weft/runtime';
import type { EvaluationExecutor } from './evaluation-executor';
import type { EvaluationObjects } from './evaluation-objects';
import type { EvaluationProgress } from './evaluation-progress';
import { type EvaluationRegistry, runId, type RunKey } from './evaluation-registry';
import { cancelledMessage, exception, type EvaluationVal, type Run, type RunState } from './evaluation-run';
import { LlmCall } from './llm-call';

/**
 * Which runs this process runs, and when: each launched in the background lane, every heartbeat
 * marking them alive, reading cancellations made elsewhere and taking up runs a stopped or dead
 * process left (evaluation-registry.ts); a cancel heard here at once; a stop that lets the rows
 * under way end and leaves the rest for the next process.
 */
export class EvaluationScheduler {
  private readonly running = new Map<string, { run: Run; done: Promise<void> }>();
  private readonly heartbeat: PeriodicWorker;
  private stopping = false;

  constructor(
    private readonly deps: {
      ingest: CallIngest;
      log: Logger;
      registry: EvaluationRegistry;
      objects: EvaluationObjects;
      progress: EvaluationProgress;
      executor: EvaluationExecutor;
      heartbeatMs: number;
      caughtUp?: () => Promise<void>;
    },
  ) {
    this.heartbeat = new PeriodicWorker(() => this.tick(), {
      name: 'evaluations',
      intervalMs: deps.heartbeatMs,
      firstPassMs: 0,
      log: deps.log,
      failure: { level: 'error', message: 'evaluate_model: heartbeat failed; tried again at the next one' },
    });
  }

  /** True once stop() was called: no run starts another row, no run is taken up. */
  get isStopping(): boolean {
    return this.stopping;
  }

  /** Heartbeats, cancellations made elsewhere, and runs left by a stopped process: now, then every heartbeat. */
  start(): void {
    this.heartbeat.start();
  }

  /**
   * Cancels a run: no row starts after it, the rows under way end, and the root ends failed
   * ("cancelled by …"). The process running it hears of it at once (here) or at its next
   * heartbeat (another process); a run no live process holds is ended here.
   */
  async cancel(req: { project_id: string; call_id: string }, caller: Caller): Promise<{ status: EvaluationStatus }> {
    const before = await this.deps.progress.status(req);
    if (before.status.code !== 'running') return before;
    const key = { project_id: req.project_id, call_id: req.call_id };
    await this.deps.registry.cancel(key, caller.userId);
    const local = this.running.get(runId(key));
    if (local) {
      local.run.cancelledBy = caller.userId;
      await local.done;
    } else {
      const holder = await this.deps.registry.owns(key);
      if (!holder || !holder.fresh) {
        const root = await this.deps.progress.readRoot(key);
        if (root) {
          await LlmCall.existing(this.deps.ingest, { projectId: key.project_id, id: key.call_id, traceId: root.traceId }).end({
            output: null,
            exception: exception(cancelledMessage(caller.userId)),
          });
          await this.deps.registry.beat([key], 'done');
        }
      }
    }
    return this.deps.progress.status(req);
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

  /** One heartbeat: this process's runs marked alive, cancellations read, stale runs taken up. */
  private async tick(): Promise<void> {
    const mine = [...this.running.values()].map((r) => r.run);
    await this.deps.registry.beat(mine.map((r) => r.key));
    const cancelled = await this.deps.registry.cancelled(mine.map((r) => r.key));
    for (const run of mine) run.cancelledBy ??= cancelled.get(runId(run.key)) ?? null;
    for (const key of await this.deps.registry.stale()) {
      if (this.stopping) break;
      if (this.running.has(runId(key))) continue;
      if (await this.deps.registry.claim(key)) await this.resume(key);
    }
  }

  /** Runs a run's rows in the background; its end (or failure) is recorded on its root. */
  launch(run: Run, root: LlmCall, state: RunState): void {
    // Background lane, whoever asked for it: the request that started the run does not own it.
    const done = inLane('background', () => this.deps.executor.execute(run, root, state))
      .catch(async (err: unknown) => {
        this.deps.log.error({ err, call_id: root.id }, 'evaluate_model: the run failed');
        await root.end({ output: null, exception: exception(err instanceof Error ? err.message : String(err)) }).catch(() => {});
        await this.deps.registry.beat([run.key], 'done').catch(() => {});
      })
      .finally(() => this.running.delete(runId(run.key)));
    this.running.set(runId(run.key), { run, done });
  }

  /** Takes up a run another process left: its finished rows kept, its interrupted rows finished, the rest run. */
  private async resume(key: RunKey): Promise<void> {
    await this.deps.caughtUp?.();
    const root = await this.deps.progress.readRoot(key);
    if (!root || root.ended) {
      await this.deps.registry.beat([key], 'done');
      return;
    }
    const rootCall = LlmCall.existing(this.deps.ingest, { projectId: key.project_id, id: key.call_id, traceId: root.traceId });
    const caller: Caller = { userId: root.userId, keyId: 'evaluate_model', isAdmin: false, entities: [] };
    const cancelledBy = (await this.deps.registry.cancelled([key])).get(runId(key));
    if (cancelledBy) {
      await rootCall.end({ output: null, exception: exception(cancelledMessage(cancelledBy)) });
      await this.deps.registry.beat([key], 'done');
      return;
    }
    const evaluation = (await this.deps.objects.readRef(key.project_id, root.evaluationRef, 'evaluation_ref')) as EvaluationVal;
    const model = await this.deps.objects.readModel(key.project_id, root.modelRef);
    const examples = await this.deps.objects.readExamples(key.project_id, evaluation);
    const scorers = await this.deps.objects.readScorers(key.project_id, evaluation);
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
    const state = await this.deps.progress.storedProgress(run, root.traceId);
    this.deps.log.info(
      { call_id: key.call_id, project: key.project_id, finished: state.results.length, interrupted: state.unfinished.length },
      'evaluate_model: taking up a run a stopped process left',
    );
    this.launch(run, rootCall, state);
  }
}
