import type { CallIngest } from '@weft/ingest';
import type { Store } from '@weft/store';
import type { EvaluationBudget } from './evaluation-budget';
import type { EvaluationRegistry } from './evaluation-registry';
import {
  cancelledMessage,
  exception,
  opName,
  PREDICT_AND_SCORE,
  type Example,
  type RowResult,
  type Run,
  type RunState,
  type UnfinishedRow,
} from './evaluation-run';
import { summarizeEvaluation } from './evaluation-summary';
import { LlmCall } from './llm-call';
import { completeStructured, runScorer } from './scorers';
import type { UpstreamRegistry } from './upstreams';

/** Rows run at once (each waits on the model, then on its judges). */
const ROW_CONCURRENCY = 4;

/**
 * Runs a run's rows, recorded as the call tree the SDK's `Evaluation.evaluate` makes
 * (predict_and_score per row → the model's predict and a call per scorer; then summarize), and
 * ends its root: summarized, cancelled, over its cost cap, or — at a stop — left registered as
 * interrupted for the next process to take up.
 */
export class EvaluationExecutor {
  constructor(
    private readonly deps: {
      store: Store;
      upstreams: UpstreamRegistry;
      ingest: CallIngest;
      registry: EvaluationRegistry;
      budget: EvaluationBudget;
      /** True once this process is stopping: no row starts after it. */
      stopping: () => boolean;
    },
  ) {}

  async execute(run: Run, root: LlmCall, state: RunState): Promise<void> {
    const results = [...state.results];
    const queue: (Example | UnfinishedRow)[] = [...state.unfinished, ...state.remaining];
    let next = 0;
    const overBudget = () => run.maxCostUsd !== null && run.spentUsd >= run.maxCostUsd;
    const worker = async () => {
      while (next < queue.length && !this.deps.stopping() && !run.cancelledBy && !overBudget()) {
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
      await this.deps.registry.beat([run.key], 'done');
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
      await this.deps.registry.beat([run.key], 'done');
      return;
    }
    // Stopping: the run stays registered, its heartbeat old, and the next process takes it up.
    if (next < queue.length) {
      await this.deps.registry.beat([run.key], 'interrupted');
      return;
    }
    const summarize = this.child(run, root, opName(run.evaluation.summarize, 'Evaluation.summarize'), { self: run.evaluationRef });
    const summary = summarizeEvaluation(
      results,
      run.scorers.map((s) => s.name),
    );
    await summarize.end({ output: summary });
    await root.end({ output: summary });
    await this.deps.registry.beat([run.key], 'done');
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
      ? LlmCall.existing(this.deps.ingest, { projectId: run.key.project_id, id: unfinished.pasId, traceId: root.traceId })
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
      answer = await completeStructured(this.deps.upstreams, run.model, example.row);
      model_latency = (performance.now() - started) / 1000;
      if ('error' in answer) await predict.end({ output: null, exception: exception(answer.error) });
      else {
        await predict.end({ output: answer.output, model: answer.model, usage: answer.usage });
        await this.deps.budget.spend(run, answer.model, answer.usage);
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
        const r = await runScorer(this.deps.store, this.deps.upstreams, s, output, example.row);
        await call.end(
          'error' in r ? { output: null, exception: exception(r.error) } : { output: r.output, model: r.model, usage: r.usage },
        );
        if (!('error' in r)) await this.deps.budget.spend(run, r.model, r.usage);
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

  private child(run: Run, parent: LlmCall, op: string, inputs: Record<string, unknown>, attributes: Record<string, unknown> = {}): LlmCall {
    return LlmCall.begin(this.deps.ingest, {
      projectId: run.key.project_id,
      caller: run.caller,
      opName: op,
      inputs,
      traceId: parent.traceId,
      parentId: parent.id,
      attributes: { ...attributes, _weave_eval_meta: { evaluate_model_worker: true, declarative: true } },
    });
  }
}
