import { z } from 'zod';
import { badRequest } from '@weft/core';
import { anyJson, jsonObject, projectId } from './common';

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
