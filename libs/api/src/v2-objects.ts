import { z } from 'zod';
import { badRequest } from '@weft/core';
import { anyJson, jsonObject, projectId } from './common';
import type { RouteSpec } from './spec';

/**
 * Weave's V2 object and evaluation APIs (0.52.29's OpCreateReq…ScoreDeleteRes, served at the
 * REST paths its HTTP client and 0.54's vendored client call: /v2/{entity}/{project}/…). The
 * project is the path's; the query string (GET, DELETE) and the body are members of the request
 * (`urlMembers`). Thin layers: ops, datasets, scorers, evaluations and models are objects;
 * evaluation runs, predictions and scores are calls.
 */

/** The path's project and an optional `project_id` in the body (the 0.52.29 client sends one with some requests), which must equal it. */
const inProject = {
  entity: z.string().min(1),
  project: z.string().min(1),
  project_id: projectId.optional().describe('optional; when sent, must be the project of the path'),
};

/** A query-string integer (`?limit=3`), or one in a JSON body. */
const queryCount = (what: string) =>
  z
    .preprocess((v) => (typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v), z.number().int().min(0))
    .optional()
    .describe(what);
/** A list in the query string: repeated (`?digests=a&digests=b`), or one comma-separated value (0.52.29's filters). */
const queryList = (splitCommas: boolean) =>
  z.preprocess(
    (v) => {
      if (v === undefined) return v;
      const items = Array.isArray(v) ? v : [v];
      return splitCommas ? items.flatMap((s) => (typeof s === 'string' ? s.split(',').filter((x) => x !== '') : [s])) : items;
    },
    z.array(z.string().min(1)).max(1000, 'at most 1000 at a time'),
  );
const page = { limit: queryCount('rows at most (absent: all)'), offset: queryCount('rows to skip') };
const ref = z.string().min(1).describe('a weave:/// ref');
const objectName = z.string().min(1).max(128);
const versionRead = { ...inProject, object_id: z.string().min(1), digest: z.string().min(1) };
const versionsDelete = {
  ...inProject,
  object_id: z.string().min(1),
  digests: queryList(false).optional().describe('the versions to delete (absent: every version)'),
};
const created = { digest: z.string(), object_id: z.string(), version_index: z.number().int() };
const versionOf = { object_id: z.string(), digest: z.string(), version_index: z.number().int(), created_at: z.string() };
export const v2DeleteRes = z.object({ num_deleted: z.number().int() });
export const v2SuccessRes = z.object({ success: z.boolean() });

export const v2ListReq = z.object({ ...inProject, ...page, eager: z.unknown().optional().describe('ignored: code is always loaded') });
export const v2VersionReadReq = z.object(versionRead);
export const v2VersionsDeleteReq = z.object(versionsDelete);

export const opCreateReq = z.object({
  ...inProject,
  name: objectName.nullish().describe('absent: `Op`'),
  source_code: z.string().nullish().describe("the op's source (absent: a placeholder)"),
});
export const opCreateRes = z.object(created);
export const opRes = z.object({ ...versionOf, code: z.string() });

export const datasetCreateReq = z.object({
  ...inProject,
  name: objectName.nullish().describe('absent: `Dataset`'),
  description: z.string().nullish(),
  rows: z.array(jsonObject),
});
export const datasetCreateRes = opCreateRes;
export const datasetRes = z.object({ ...versionOf, name: z.string(), description: z.string().nullable(), rows: z.string() });

export const scorerCreateReq = z.object({
  ...inProject,
  name: objectName,
  description: z.string().nullish(),
  op_source_code: z.string().describe('the source of its score op'),
});
export const scorerCreateRes = z.object({ ...created, scorer: z.string() });
export const scorerRes = z.object({ ...versionOf, name: z.string(), description: z.string().nullable(), score_op: z.string() });

export const evaluationCreateReq = z.object({
  ...inProject,
  name: objectName,
  description: z.string().nullish(),
  dataset: ref,
  scorers: z.array(ref).max(1000).nullish(),
  trials: z.number().int().min(1).default(1),
  evaluation_name: z.string().nullish(),
  eval_attributes: jsonObject.nullish(),
});
export const evaluationCreateRes = z.object({ ...created, evaluation_ref: z.string() });
export const evaluationRes = z.object({
  ...versionOf,
  name: z.string(),
  description: z.string().nullable(),
  dataset: z.string(),
  scorers: z.array(z.string()),
  trials: z.number().int(),
  evaluation_name: z.string().nullable(),
  evaluate_op: z.string().nullable(),
  predict_and_score_op: z.string().nullable(),
  summarize_op: z.string().nullable(),
});

export const modelCreateReq = z.object({
  ...inProject,
  name: objectName,
  description: z.string().nullish(),
  source_code: z.string(),
  attributes: jsonObject.nullish(),
});
export const modelCreateRes = z.object({ ...created, model_ref: z.string() });
export const modelRes = z.object({
  ...versionOf,
  name: z.string(),
  description: z.string().nullable(),
  source_code: z.string(),
  attributes: jsonObject.nullable(),
});

export const evaluationRunCreateReq = z.object({ ...inProject, evaluation: z.string().min(1), model: z.string().min(1) });
export const evaluationRunCreateRes = z.object({ evaluation_run_id: z.string() });
export const evaluationRunReadReq = z.object({ ...inProject, evaluation_run_id: z.string().min(1) });
export const evaluationRunRes = z.object({
  evaluation_run_id: z.string(),
  evaluation: z.string(),
  model: z.string(),
  status: z.enum(['running', 'completed', 'failed']),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
  summary: jsonObject.nullable(),
});
export const evaluationRunListReq = z.object({
  ...inProject,
  ...page,
  // 0.52.29 sends comma-joined `evaluation_refs`, `model_refs`, `evaluation_run_ids`; 0.54 repeats `evaluations`, `models`, `evaluation_run_ids`.
  evaluations: queryList(true).optional(),
  evaluation_refs: queryList(true).optional(),
  models: queryList(true).optional(),
  model_refs: queryList(true).optional(),
  evaluation_run_ids: queryList(true).optional(),
});
export const evaluationRunDeleteReq = z.object({ ...inProject, evaluation_run_ids: queryList(false) });
export const evaluationRunFinishReq = z.object({ ...inProject, evaluation_run_id: z.string().min(1), summary: jsonObject.nullish() });

export const predictionCreateReq = z.object({
  ...inProject,
  model: z.string().min(1),
  inputs: jsonObject,
  output: anyJson,
  evaluation_run_id: z.string().min(1).nullish(),
});
export const predictionCreateRes = z.object({ prediction_id: z.string() });
export const predictionReadReq = z.object({ ...inProject, prediction_id: z.string().min(1) });
export const predictionRes = z.object({
  prediction_id: z.string(),
  model: z.string(),
  inputs: jsonObject,
  output: anyJson,
  evaluation_run_id: z.string().nullable(),
  wb_user_id: z.string().nullable(),
});
export const predictionListReq = z.object({ ...inProject, ...page, evaluation_run_id: z.string().min(1).optional() });
export const predictionDeleteReq = z.object({ ...inProject, prediction_ids: queryList(false) });
export const predictionFinishReq = predictionReadReq;

export const scoreCreateReq = z.object({
  ...inProject,
  prediction_id: z.string().min(1),
  scorer: ref,
  value: z.number(),
  evaluation_run_id: z.string().min(1).nullish(),
});
export const scoreCreateRes = z.object({ score_id: z.string() });
export const scoreReadReq = z.object({ ...inProject, score_id: z.string().min(1) });
export const scoreRes = z.object({
  score_id: z.string(),
  scorer: z.string(),
  value: z.number(),
  evaluation_run_id: z.string().nullable(),
  wb_user_id: z.string().nullable(),
});
export const scoreListReq = predictionListReq;
export const scoreDeleteReq = z.object({ ...inProject, score_ids: queryList(false) });

/** The project of a V2 request: its path's, which a `project_id` sent in the body must equal. */
export function v2ProjectOf(req: { entity: string; project: string; project_id?: string }): string {
  const project = `${req.entity}/${req.project}`;
  if (req.project_id !== undefined && req.project_id !== project)
    throw badRequest(`project_id: '${req.project_id}' differs from the project of the path, '${project}'`, 'project_id');
  return project;
}

/** Weave's V2 object and evaluation APIs (docs/api.md "V2 object and evaluation APIs"). */
export const v2RouteSpecs = {
  v2OpCreate: {
    path: '/v2/:entity/:project/ops',
    urlMembers: true,
    summary: 'Create an op (its source code stored as its obj.py file); a new version when the name exists',
    auth: 'basic',
    service: 'gateway',
    request: opCreateReq,
    response: opCreateRes,
    published: true,
  },
  v2OpList: {
    path: '/v2/:entity/:project/ops',
    method: 'GET',
    urlMembers: true,
    summary: 'The ops of a project (every live version, with its code), paged (JSONL)',
    auth: 'basic',
    service: 'gateway',
    request: v2ListReq,
    response: opRes,
    stream: 'jsonl',
    published: true,
  },
  v2OpRead: {
    path: '/v2/:entity/:project/ops/:object_id/versions/:digest',
    method: 'GET',
    urlMembers: true,
    summary: 'Read one version of an op (404; deleted: 404 with deleted_at)',
    auth: 'basic',
    service: 'gateway',
    request: v2VersionReadReq,
    response: opRes,
    published: true,
  },
  v2OpDelete: {
    path: '/v2/:entity/:project/ops/:object_id',
    method: 'DELETE',
    urlMembers: true,
    summary: 'Delete versions of an op (digests; absent: every version)',
    auth: 'basic',
    service: 'gateway',
    request: v2VersionsDeleteReq,
    response: v2DeleteRes,
    published: true,
  },
  v2DatasetCreate: {
    path: '/v2/:entity/:project/datasets',
    urlMembers: true,
    summary: 'Create a Dataset (its rows stored as a table); a new version when the name exists',
    auth: 'basic',
    service: 'gateway',
    request: datasetCreateReq,
    response: datasetCreateRes,
    published: true,
  },
  v2DatasetList: {
    path: '/v2/:entity/:project/datasets',
    method: 'GET',
    urlMembers: true,
    summary: 'The Datasets of a project (every live version; rows as a table ref), paged (JSONL)',
    auth: 'basic',
    service: 'gateway',
    request: v2ListReq,
    response: datasetRes,
    stream: 'jsonl',
    published: true,
  },
  v2DatasetRead: {
    path: '/v2/:entity/:project/datasets/:object_id/versions/:digest',
    method: 'GET',
    urlMembers: true,
    summary: 'Read one version of a Dataset (404; deleted: 404 with deleted_at)',
    auth: 'basic',
    service: 'gateway',
    request: v2VersionReadReq,
    response: datasetRes,
    published: true,
  },
  v2DatasetDelete: {
    path: '/v2/:entity/:project/datasets/:object_id',
    method: 'DELETE',
    urlMembers: true,
    summary: 'Delete versions of a Dataset (digests; absent: every version)',
    auth: 'basic',
    service: 'gateway',
    request: v2VersionsDeleteReq,
    response: v2DeleteRes,
    published: true,
  },
  v2ScorerCreate: {
    path: '/v2/:entity/:project/scorers',
    urlMembers: true,
    summary: 'Create a Scorer (its score op from the source given, a default summarize op); a new version when the name exists',
    auth: 'basic',
    service: 'gateway',
    request: scorerCreateReq,
    response: scorerCreateRes,
    published: true,
  },
  v2ScorerList: {
    path: '/v2/:entity/:project/scorers',
    method: 'GET',
    urlMembers: true,
    summary: 'The Scorers of a project (every live version), paged (JSONL)',
    auth: 'basic',
    service: 'gateway',
    request: v2ListReq,
    response: scorerRes,
    stream: 'jsonl',
    published: true,
  },
  v2ScorerRead: {
    path: '/v2/:entity/:project/scorers/:object_id/versions/:digest',
    method: 'GET',
    urlMembers: true,
    summary: 'Read one version of a Scorer (404; deleted: 404 with deleted_at)',
    auth: 'basic',
    service: 'gateway',
    request: v2VersionReadReq,
    response: scorerRes,
    published: true,
  },
  v2ScorerDelete: {
    path: '/v2/:entity/:project/scorers/:object_id',
    method: 'DELETE',
    urlMembers: true,
    summary: 'Delete versions of a Scorer (digests; absent: every version)',
    auth: 'basic',
    service: 'gateway',
    request: v2VersionsDeleteReq,
    response: v2DeleteRes,
    published: true,
  },
  v2EvaluationCreate: {
    path: '/v2/:entity/:project/evaluations',
    urlMembers: true,
    summary:
      'Create an Evaluation of a dataset with scorers (placeholder evaluate, predict_and_score and summarize ops); a new version when the name exists',
    auth: 'basic',
    service: 'gateway',
    request: evaluationCreateReq,
    response: evaluationCreateRes,
    published: true,
  },
  v2EvaluationList: {
    path: '/v2/:entity/:project/evaluations',
    method: 'GET',
    urlMembers: true,
    summary: 'The Evaluations of a project (every live version), paged (JSONL)',
    auth: 'basic',
    service: 'gateway',
    request: v2ListReq,
    response: evaluationRes,
    stream: 'jsonl',
    published: true,
  },
  v2EvaluationRead: {
    path: '/v2/:entity/:project/evaluations/:object_id/versions/:digest',
    method: 'GET',
    urlMembers: true,
    summary: 'Read one version of an Evaluation of a dataset with scorers (404; deleted: 404 with deleted_at)',
    auth: 'basic',
    service: 'gateway',
    request: v2VersionReadReq,
    response: evaluationRes,
    published: true,
  },
  v2EvaluationDelete: {
    path: '/v2/:entity/:project/evaluations/:object_id',
    method: 'DELETE',
    urlMembers: true,
    summary: 'Delete versions of an Evaluation of a dataset with scorers (digests; absent: every version)',
    auth: 'basic',
    service: 'gateway',
    request: v2VersionsDeleteReq,
    response: v2DeleteRes,
    published: true,
  },
  v2ModelCreate: {
    path: '/v2/:entity/:project/models',
    urlMembers: true,
    summary: 'Create a Model (its source code stored as its obj.py file, its attributes as members); a new version when the name exists',
    auth: 'basic',
    service: 'gateway',
    request: modelCreateReq,
    response: modelCreateRes,
    published: true,
  },
  v2ModelList: {
    path: '/v2/:entity/:project/models',
    method: 'GET',
    urlMembers: true,
    summary: 'The Models of a project (every live version, with source and attributes), paged (JSONL)',
    auth: 'basic',
    service: 'gateway',
    request: v2ListReq,
    response: modelRes,
    stream: 'jsonl',
    published: true,
  },
  v2ModelRead: {
    path: '/v2/:entity/:project/models/:object_id/versions/:digest',
    method: 'GET',
    urlMembers: true,
    summary: 'Read one version of a Model (404; deleted: 404 with deleted_at)',
    auth: 'basic',
    service: 'gateway',
    request: v2VersionReadReq,
    response: modelRes,
    published: true,
  },
  v2ModelDelete: {
    path: '/v2/:entity/:project/models/:object_id',
    method: 'DELETE',
    urlMembers: true,
    summary: 'Delete versions of a Model (digests; absent: every version)',
    auth: 'basic',
    service: 'gateway',
    request: v2VersionsDeleteReq,
    response: v2DeleteRes,
    published: true,
  },
  v2EvaluationRunCreate: {
    path: '/v2/:entity/:project/evaluation_runs',
    urlMembers: true,
    summary: 'Start an evaluation run of a model (an Evaluation.evaluate call)',
    auth: 'basic',
    service: 'gateway',
    request: evaluationRunCreateReq,
    response: evaluationRunCreateRes,
    published: true,
  },
  v2EvaluationRunList: {
    path: '/v2/:entity/:project/evaluation_runs',
    method: 'GET',
    urlMembers: true,
    summary: 'Evaluation runs of a project, by evaluation, model or id, paged (JSONL)',
    auth: 'basic',
    service: 'gateway',
    request: evaluationRunListReq,
    response: evaluationRunRes,
    stream: 'jsonl',
    published: true,
  },
  v2EvaluationRunDelete: {
    path: '/v2/:entity/:project/evaluation_runs',
    method: 'DELETE',
    urlMembers: true,
    summary: 'Delete evaluation runs (their calls and descendants)',
    auth: 'basic',
    service: 'gateway',
    request: evaluationRunDeleteReq,
    response: v2DeleteRes,
    published: true,
  },
  v2EvaluationRunRead: {
    path: '/v2/:entity/:project/evaluation_runs/:evaluation_run_id',
    method: 'GET',
    urlMembers: true,
    summary: 'Read an evaluation run: its refs, status, times and summary',
    auth: 'basic',
    service: 'gateway',
    request: evaluationRunReadReq,
    response: evaluationRunRes,
    published: true,
  },
  v2EvaluationRunFinish: {
    path: '/v2/:entity/:project/evaluation_runs/:evaluation_run_id/finish',
    urlMembers: true,
    summary: "Finish an evaluation run: a summarize call with the scorers' means, then the run's end",
    auth: 'basic',
    service: 'gateway',
    request: evaluationRunFinishReq,
    response: v2SuccessRes,
    published: true,
  },
  v2PredictionCreate: {
    path: '/v2/:entity/:project/predictions',
    urlMembers: true,
    summary: "Record a model's prediction (a <model>.predict call; in a run, under a predict_and_score call)",
    auth: 'basic',
    service: 'gateway',
    request: predictionCreateReq,
    response: predictionCreateRes,
    published: true,
  },
  v2PredictionList: {
    path: '/v2/:entity/:project/predictions',
    method: 'GET',
    urlMembers: true,
    summary: 'Predictions of a project or of one evaluation run, paged (JSONL)',
    auth: 'basic',
    service: 'gateway',
    request: predictionListReq,
    response: predictionRes,
    stream: 'jsonl',
    published: true,
  },
  v2PredictionDelete: {
    path: '/v2/:entity/:project/predictions',
    method: 'DELETE',
    urlMembers: true,
    summary: 'Delete predictions (their calls)',
    auth: 'basic',
    service: 'gateway',
    request: predictionDeleteReq,
    response: v2DeleteRes,
    published: true,
  },
  v2PredictionRead: {
    path: '/v2/:entity/:project/predictions/:prediction_id',
    method: 'GET',
    urlMembers: true,
    summary: 'Read a prediction',
    auth: 'basic',
    service: 'gateway',
    request: predictionReadReq,
    response: predictionRes,
    published: true,
  },
  v2PredictionFinish: {
    path: '/v2/:entity/:project/predictions/:prediction_id/finish',
    urlMembers: true,
    summary: 'Finish a prediction; in a run, also its predict_and_score call (output, scores, model latency)',
    auth: 'basic',
    service: 'gateway',
    request: predictionFinishReq,
    response: v2SuccessRes,
    published: true,
  },
  v2ScoreCreate: {
    path: '/v2/:entity/:project/scores',
    urlMembers: true,
    summary: "Record a scorer's score of a prediction (a <scorer>.score call, and feedback on the prediction)",
    auth: 'basic',
    service: 'gateway',
    request: scoreCreateReq,
    response: scoreCreateRes,
    published: true,
  },
  v2ScoreList: {
    path: '/v2/:entity/:project/scores',
    method: 'GET',
    urlMembers: true,
    summary: 'Scores of a project or of one evaluation run, paged (JSONL)',
    auth: 'basic',
    service: 'gateway',
    request: scoreListReq,
    response: scoreRes,
    stream: 'jsonl',
    published: true,
  },
  v2ScoreDelete: {
    path: '/v2/:entity/:project/scores',
    method: 'DELETE',
    urlMembers: true,
    summary: 'Delete scores (their calls)',
    auth: 'basic',
    service: 'gateway',
    request: scoreDeleteReq,
    response: v2DeleteRes,
    published: true,
  },
  v2ScoreRead: {
    path: '/v2/:entity/:project/scores/:score_id',
    method: 'GET',
    urlMembers: true,
    summary: 'Read a score',
    auth: 'basic',
    service: 'gateway',
    request: scoreReadReq,
    response: scoreRes,
    published: true,
  },
} as const satisfies Record<string, RouteSpec>;
