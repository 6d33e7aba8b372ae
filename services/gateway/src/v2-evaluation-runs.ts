import type { FastifyInstance } from 'fastify';
import { v2ProjectOf, type CompletedCall } from '@weft/api';
import { badRequest, type Caller, clickHouseToIso, generateId, notFound } from '@weft/core';
import { addRoute, sendJsonl, type Authenticator } from '@weft/http';
import type { CallIngest } from '@weft/ingest';
import { callRef, createFeedback, isDict, parseRef } from '@weft/objects';
import { CallsQueryPlan, matchedCallsOldestFirst } from '@weft/query';
import type { Store } from '@weft/store';
import type { CallMutations } from './call-mutations';
import { checkRefInProject, createOp, emptyBodyIsNoBody, opRefOf } from './v2-objects';
import { EVALUATE_SOURCE, MODEL_PREDICT_SOURCE, objectIdOf, PREDICT_AND_SCORE_SOURCE, SCORER_SCORE_SOURCE } from './v2-object-vals';

export interface V2EvaluationRunDeps {
  store: Store;
  auth: Authenticator;
  ingest: CallIngest;
  mutations: CallMutations;
  /** Resolves once the writes acknowledged so far are stored (Bus.caughtUp); absent on Kafka, where reads retry a moment instead. */
  caughtUp?: () => Promise<void>;
}

/**
 * The op names and `attributes.weave` markers of the calls the V2 evaluation APIs write: the
 * call tree Evaluation.evaluate makes in the SDK (run → predict_and_score → <model>.predict and
 * <scorer>.score, then Evaluation.summarize), so the UI shows a V2 run as any evaluation.
 */
const EVALUATE_OP = 'Evaluation.evaluate';
const PREDICT_AND_SCORE_OP = 'Evaluation.predict_and_score';
const SUMMARIZE_OP = 'Evaluation.summarize';
/** The reference's RUNNABLE_FEEDBACK_TYPE_PREFIX: a score is also feedback on its prediction. */
const SCORE_FEEDBACK_PREFIX = 'wandb.runnable';

/** A call as these APIs read it. */
interface CallRow {
  id: string;
  trace_id: string;
  parent_id: string | null;
  op_name: string;
  started_at: string;
  ended_at: string | null;
  exception: string | null;
  attributes: Record<string, unknown>;
  inputs: Record<string, unknown>;
  output: unknown;
  summary: Record<string, unknown> | null;
  svc_user_id: string | null;
}
const COLUMNS = [
  'trace_id',
  'parent_id',
  'op_name',
  'started_at',
  'ended_at',
  'exception',
  'attributes_dump',
  'inputs_dump',
  'output_dump',
  'summary_dump',
  'svc_user_id',
];

const parseDict = (s: string | null | undefined): Record<string, unknown> => {
  const v = s ? (JSON.parse(s) as unknown) : {};
  return isDict(v) ? v : {};
};
const weaveAttrs = (c: CallRow): Record<string, unknown> => (isDict(c.attributes.weave) ? c.attributes.weave : {});
const str = (x: unknown): string | null => (typeof x === 'string' ? x : null);
const statusOf = (c: CallRow): 'running' | 'completed' | 'failed' =>
  c.ended_at === null ? 'running' : c.exception === null ? 'completed' : 'failed';
const nowIso = () => new Date().toISOString();
/** `{$eq: [attributes.weave.<key>, value]}`. */
const weaveAttrIs = (key: string, value: string) => ({ $eq: [{ $getField: `attributes.weave.${key}` }, { $literal: value }] });
const weaveAttrIn = (key: string, values: string[]) => ({
  $in: [{ $getField: `attributes.weave.${key}` }, values.map((v) => ({ $literal: v }))],
});

/** A ref's object name as the start of an op's name (`<model>.predict`); a name an object id cannot hold is made safe. */
const opBaseName = (name: string, fallback: string) =>
  /^[\p{L}\p{N}_.-]{1,100}$/u.test(name) ? name : objectIdOf(name, fallback).slice(0, 100) || fallback;

/** The op name's object name (`weave:///e/p/op/<name>:<digest>` → name), or the op name itself. */
const opNameOf = (opName: string) => {
  const ref = parseRef(opName);
  return ref && ref.kind === 'op' ? ref.name : opName;
};

/**
 * /v2/{entity}/{project}/evaluation_runs|predictions|scores: evaluation runs, predictions and
 * scores are calls (written through the bus like any call, so they are as durable), marked in
 * `attributes.weave` and read back with a calls query.
 */
export async function v2EvaluationRunRoutes(app: FastifyInstance, deps: V2EvaluationRunDeps): Promise<void> {
  const { store, auth, ingest, mutations } = deps;
  emptyBodyIsNoBody(app);
  const calls = new CallReader(store, deps.caughtUp);

  // Evaluation runs: an Evaluation.evaluate call with the evaluation and the model as inputs.
  addRoute(app, auth, 'v2EvaluationRunCreate', async (body, { caller }) => {
    const projectId = v2ProjectOf(body);
    checkWeaveRef(body.evaluation, projectId, 'evaluation');
    checkWeaveRef(body.model, projectId, 'model');
    const op = await createOp(store, projectId, EVALUATE_OP, EVALUATE_SOURCE, caller.userId);
    const id = generateId();
    await ingest.start(
      {
        project_id: projectId,
        id,
        trace_id: id,
        op_name: opRefOf(projectId, op),
        started_at: nowIso(),
        attributes: { weave: { evaluation_run: 'true', evaluation: body.evaluation, model: body.model } },
        inputs: { self: body.evaluation, model: body.model },
      },
      caller,
    );
    return { evaluation_run_id: id };
  });
  addRoute(app, auth, 'v2EvaluationRunRead', async (body) => {
    const run = await calls.one(v2ProjectOf(body), body.evaluation_run_id, 'evaluation_run', 'Evaluation run');
    return runOf(run);
  });
  addRoute(app, auth, 'v2EvaluationRunList', async (body, { reply }) => {
    const evaluations = [...(body.evaluations ?? []), ...(body.evaluation_refs ?? [])];
    const models = [...(body.models ?? []), ...(body.model_refs ?? [])];
    const conds: unknown[] = [weaveAttrIs('evaluation_run', 'true')];
    if (evaluations.length) conds.push(weaveAttrIn('evaluation', evaluations));
    if (models.length) conds.push(weaveAttrIn('model', models));
    const rows = await calls.list(
      v2ProjectOf(body),
      { $and: conds },
      body,
      body.evaluation_run_ids ? { call_ids: body.evaluation_run_ids } : {},
    );
    await sendJsonl(reply, toAsync(rows.map(runOf)));
    return undefined;
  });
  addRoute(app, auth, 'v2EvaluationRunDelete', async (body) => mutations.delete(v2ProjectOf(body), body.evaluation_run_ids));
  addRoute(app, auth, 'v2EvaluationRunFinish', async (body, { caller }) => {
    const projectId = v2ProjectOf(body);
    const run = await calls.one(projectId, body.evaluation_run_id, 'evaluation_run', 'Evaluation run');
    const output = summarizeRun(await calls.children(projectId, run.id));
    const at = nowIso();
    const summarize: CompletedCall = {
      project_id: projectId,
      id: generateId(),
      trace_id: run.trace_id,
      parent_id: run.id,
      op_name: SUMMARIZE_OP,
      started_at: at,
      ended_at: at,
      attributes: {},
      inputs: { self: run.inputs.self ?? null },
      output,
      summary: {},
    };
    await ingest.complete([summarize], caller);
    await ingest.end({ project_id: projectId, id: run.id, ended_at: nowIso(), output, summary: body.summary ?? {} });
    return { success: true };
  });

  // Predictions: a <model>.predict call, finished at once; in a run, under a predict_and_score call.
  addRoute(app, auth, 'v2PredictionCreate', async (body, { caller }) => {
    const projectId = v2ProjectOf(body);
    checkWeaveRef(body.model, projectId, 'model');
    const id = generateId();
    let traceId = id;
    let parentId: string | null = null;
    if (body.evaluation_run_id) {
      const run = await calls.one(projectId, body.evaluation_run_id, 'evaluation_run', 'Evaluation run', 'evaluation_run_id');
      const op = await createOp(store, projectId, PREDICT_AND_SCORE_OP, PREDICT_AND_SCORE_SOURCE, caller.userId);
      parentId = generateId();
      traceId = run.trace_id;
      await ingest.start(
        {
          project_id: projectId,
          id: parentId,
          trace_id: traceId,
          parent_id: run.id,
          op_name: opRefOf(projectId, op),
          started_at: nowIso(),
          attributes: { weave: { predict_call_id: id } },
          inputs: { self: run.inputs.self ?? null, model: body.model, example: body.inputs },
        },
        caller,
      );
    }
    const modelRef = parseRef(body.model);
    const modelName = modelRef && (modelRef.kind === 'object' || modelRef.kind === 'op') ? opBaseName(modelRef.name, 'Model') : 'Model';
    await writeFinishedCall(deps, caller, projectId, {
      id,
      traceId,
      parentId,
      op: { name: `${modelName}.predict`, source: MODEL_PREDICT_SOURCE },
      weave: { prediction: 'true', model: body.model },
      evaluationRunId: body.evaluation_run_id,
      inputs: { self: body.model, inputs: body.inputs },
      output: body.output,
    });
    return { prediction_id: id };
  });
  addRoute(app, auth, 'v2PredictionRead', async (body) =>
    predictionOf(await calls.one(v2ProjectOf(body), body.prediction_id, 'prediction', 'Prediction')),
  );
  addRoute(app, auth, 'v2PredictionList', async (body, { reply }) => {
    const conds: unknown[] = [weaveAttrIs('prediction', 'true')];
    if (body.evaluation_run_id) conds.push(weaveAttrIs('evaluation_run_id', body.evaluation_run_id));
    const rows = await calls.list(v2ProjectOf(body), { $and: conds }, body);
    await sendJsonl(reply, toAsync(rows.map(predictionOf)));
    return undefined;
  });
  addRoute(app, auth, 'v2PredictionDelete', async (body) => mutations.delete(v2ProjectOf(body), body.prediction_ids));
  addRoute(app, auth, 'v2PredictionFinish', async (body) => {
    const projectId = v2ProjectOf(body);
    const prediction = await calls.one(projectId, body.prediction_id, 'prediction', 'Prediction');
    // Predictions are written finished (with their output); a prediction still running is ended here.
    if (prediction.ended_at === null) await ingest.end({ project_id: projectId, id: prediction.id, ended_at: nowIso(), summary: {} });
    const parent = prediction.parent_id ? await calls.find(projectId, prediction.parent_id) : null;
    if (!parent || opNameOf(parent.op_name) !== PREDICT_AND_SCORE_OP) return { success: true };
    // In a run: predict_and_score ends with the prediction's output, its scores by scorer, and the model's latency.
    const scores: Record<string, unknown> = {};
    for (const c of await calls.children(projectId, parent.id)) {
      if (weaveAttrs(c).score !== 'true' || c.output === null) continue;
      const scorer = parseRef(str(weaveAttrs(c).scorer) ?? '');
      scores[scorer && scorer.kind !== 'table' && scorer.kind !== 'call' ? scorer.name : 'unknown'] = c.output;
    }
    const latency = prediction.ended_at ? (Date.parse(prediction.ended_at) - Date.parse(prediction.started_at)) / 1000 : null;
    await ingest.end({
      project_id: projectId,
      id: parent.id,
      ended_at: nowIso(),
      output: { output: prediction.output, scores, model_latency: latency === null ? null : { mean: latency } },
      summary: {},
    });
    return { success: true };
  });

  // Scores: a <scorer>.score call beside its prediction, and feedback on the prediction (what the UI shows).
  addRoute(app, auth, 'v2ScoreCreate', async (body, { caller }) => {
    const projectId = v2ProjectOf(body);
    checkRefInProject(body.scorer, projectId, 'scorer', ['object', 'op']);
    const scorerName = (parseRef(body.scorer) as { name: string }).name;
    const prediction = await calls.one(projectId, body.prediction_id, 'prediction', 'Prediction', 'prediction_id');
    const id = generateId();
    // In a run: beside the prediction (under its predict_and_score call); else a trace of its own.
    let traceId = id;
    let parentId: string | null = null;
    if (body.evaluation_run_id) {
      const run = await calls.one(projectId, body.evaluation_run_id, 'evaluation_run', 'Evaluation run', 'evaluation_run_id');
      traceId = run.trace_id;
      parentId = prediction.parent_id ?? run.id;
    }
    await writeFinishedCall(deps, caller, projectId, {
      id,
      traceId,
      parentId,
      op: { name: `${opBaseName(scorerName, 'Scorer')}.score`, source: SCORER_SCORE_SOURCE },
      weave: { score: 'true', prediction_id: body.prediction_id, scorer: body.scorer },
      evaluationRunId: body.evaluation_run_id,
      inputs: {
        self: body.scorer,
        inputs: isDict(prediction.inputs.inputs) ? prediction.inputs.inputs : {},
        output: prediction.output,
      },
      output: body.value,
    });
    await createFeedback(
      store,
      [
        {
          project_id: projectId,
          svc_ref: callRef(projectId, prediction.id),
          feedback_type: `${SCORE_FEEDBACK_PREFIX}.${scorerName}`,
          payload: { output: body.value },
          runnable_ref: body.scorer,
        },
      ],
      caller.userId,
    );
    return { score_id: id };
  });
  addRoute(app, auth, 'v2ScoreRead', async (body) => scoreOf(await calls.one(v2ProjectOf(body), body.score_id, 'score', 'Score')));
  addRoute(app, auth, 'v2ScoreList', async (body, { reply }) => {
    const conds: unknown[] = [weaveAttrIs('score', 'true')];
    if (body.evaluation_run_id) conds.push(weaveAttrIs('evaluation_run_id', body.evaluation_run_id));
    const rows = await calls.list(v2ProjectOf(body), { $and: conds }, body);
    await sendJsonl(reply, toAsync(rows.map(scoreOf)));
    return undefined;
  });
  addRoute(app, auth, 'v2ScoreDelete', async (body) => mutations.delete(v2ProjectOf(body), body.score_ids));
}

/**
 * The one builder of the finished calls these APIs write — a prediction (`<model>.predict`) and a
 * score (`<scorer>.score`): the op created from its name and source, the call written finished
 * with its output (started and ended now), marked in `attributes.weave` with the run it belongs
 * to, if any. In a run it is placed in the run's trace under `parentId`; else it is a trace of its own.
 */
async function writeFinishedCall(
  deps: Pick<V2EvaluationRunDeps, 'store' | 'ingest'>,
  caller: Caller,
  projectId: string,
  call: {
    id: string;
    traceId: string;
    parentId: string | null;
    op: { name: string; source: string };
    weave: Record<string, unknown>;
    evaluationRunId: string | null | undefined;
    inputs: Record<string, unknown>;
    output: unknown;
  },
): Promise<void> {
  const op = await createOp(deps.store, projectId, call.op.name, call.op.source, caller.userId);
  const at = nowIso();
  await deps.ingest.complete(
    [
      {
        project_id: projectId,
        id: call.id,
        trace_id: call.traceId,
        parent_id: call.parentId,
        op_name: opRefOf(projectId, op),
        started_at: at,
        ended_at: at,
        attributes: { weave: { ...call.weave, ...(call.evaluationRunId ? { evaluation_run_id: call.evaluationRunId } : {}) } },
        inputs: call.inputs,
        output: call.output,
        summary: {},
      },
    ],
    caller,
  );
}

/** A weave:/// ref must point into the project; any other string (a caller's own naming) is kept as given. */
function checkWeaveRef(ref: string, projectId: string, field: string): void {
  if (ref.startsWith('weave:///')) checkRefInProject(ref, projectId, field, ['object', 'op']);
}

const runOf = (c: CallRow) => {
  const a = weaveAttrs(c);
  return {
    evaluation_run_id: c.id,
    evaluation: str(a.evaluation) ?? '',
    model: str(a.model) ?? '',
    status: statusOf(c),
    started_at: c.started_at,
    finished_at: c.ended_at,
    summary: c.summary,
  };
};
const predictionOf = (c: CallRow) => ({
  prediction_id: c.id,
  model: str(weaveAttrs(c).model) ?? '',
  inputs: isDict(c.inputs.inputs) ? c.inputs.inputs : {},
  output: c.output,
  evaluation_run_id: str(weaveAttrs(c).evaluation_run_id),
  wb_user_id: c.svc_user_id,
});
const scoreOf = (c: CallRow) => ({
  score_id: c.id,
  scorer: str(weaveAttrs(c).scorer) ?? '',
  value: typeof c.output === 'number' ? c.output : 0,
  evaluation_run_id: str(weaveAttrs(c).evaluation_run_id),
  wb_user_id: c.svc_user_id,
});

/**
 * A run's output: the mean of each scorer's numeric scores over its predict_and_score calls, and
 * of the model's outputs when they are numbers.
 */
function summarizeRun(children: CallRow[]): Record<string, unknown> {
  const byScorer = new Map<string, number[]>();
  const outputs: number[] = [];
  for (const c of children) {
    if (opNameOf(c.op_name) !== PREDICT_AND_SCORE_OP || !isDict(c.output)) continue;
    if (typeof c.output.output === 'number') outputs.push(c.output.output);
    const scores = isDict(c.output.scores) ? c.output.scores : {};
    for (const [name, v] of Object.entries(scores)) {
      const list = byScorer.get(name) ?? [];
      if (typeof v === 'number') list.push(v);
      byScorer.set(name, list);
    }
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const out: Record<string, unknown> = {};
  for (const [name, xs] of byScorer) if (xs.length) out[name] = { mean: mean(xs) };
  if (outputs.length) out.output = { mean: mean(outputs) };
  return out;
}

async function* toAsync<T>(items: readonly T[]): AsyncIterable<T> {
  yield* items;
}

/** Reads the calls of these APIs (live ones; deleted calls are left out by the calls query). */
class CallReader {
  constructor(
    private readonly store: Store,
    private readonly caughtUp?: () => Promise<void>,
  ) {}

  /** The call, or null. Without caughtUp (Kafka) a call written just before may not be stored yet: a few short retries. */
  async find(projectId: string, id: string): Promise<CallRow | null> {
    await this.caughtUp?.();
    for (let attempt = 0; ; attempt++) {
      const [row] = await this.query(projectId, { call_ids: [id] }, undefined, { limit: 1 });
      if (row || this.caughtUp || attempt >= 10) return row ?? null;
      await new Promise((r) => setTimeout(r, 50 * (attempt + 1)));
    }
  }

  /** The call marked `attributes.weave.<marker>`; else a 404 naming the thing (and the field it was named by). */
  async one(projectId: string, id: string, marker: string, noun: string, field?: string): Promise<CallRow> {
    const call = await this.find(projectId, id);
    if (!call || weaveAttrs(call)[marker] !== 'true') {
      const reason = `${noun} ${id} not found`;
      throw field ? badRequest(`${field}: ${reason}`, field) : notFound(reason);
    }
    return call;
  }

  async children(projectId: string, parentId: string): Promise<CallRow[]> {
    await this.caughtUp?.();
    return this.query(projectId, { parent_ids: [parentId] });
  }

  async list(
    projectId: string,
    expr: Record<string, unknown>,
    page: { limit?: number; offset?: number },
    filter: Record<string, string[]> = {},
  ): Promise<CallRow[]> {
    await this.caughtUp?.();
    if (page.limit === 0) return [];
    return this.query(projectId, filter, expr, page);
  }

  /** Matching calls, oldest first. */
  private async query(
    projectId: string,
    filter: Record<string, string[]>,
    expr?: Record<string, unknown>,
    page: { limit?: number; offset?: number } = {},
  ): Promise<CallRow[]> {
    const plan = new CallsQueryPlan({ project_id: projectId, filter, ...(expr ? { query: { $expr: expr } } : {}), sort_by: [] });
    const rows = await matchedCallsOldestFirst<Record<string, string | null>>(this.store, plan, COLUMNS, page, 'v2-evaluation-runs.query');
    return rows.map((r) => ({
      id: r.id!,
      trace_id: r.trace_id!,
      parent_id: r.parent_id ?? null,
      op_name: r.op_name!,
      started_at: clickHouseToIso(r.started_at!),
      ended_at: r.ended_at ? clickHouseToIso(r.ended_at) : null,
      exception: r.exception ?? null,
      attributes: parseDict(r.attributes_dump),
      inputs: parseDict(r.inputs_dump),
      output: r.output_dump ? (JSON.parse(r.output_dump) as unknown) : null,
      summary: r.summary_dump ? parseDict(r.summary_dump) : null,
      svc_user_id: r.svc_user_id ?? null,
    }));
  }
}
