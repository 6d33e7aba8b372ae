import { z } from 'zod';
import { callFilter, projectId, query } from './common';
import type { RouteSpec } from './spec';

/**
 * Server-side evaluations (the Weave 0.54 SDK's vendored client: EvaluationEvaluateModelParams,
 * EvaluationStatusParams and their responses): an Evaluation object run against a model object
 * by the server, its progress read by the root call's id.
 */

const objectRef = (what: string) => z.string().startsWith('weave:///', 'must be a weave:/// object ref').describe(`ref of ${what}`);

export const evaluateModelReq = z.object({
  project_id: projectId,
  evaluation_ref: objectRef('an Evaluation object (dataset and scorers)'),
  model_ref: objectRef('an LLMStructuredCompletionModel object'),
  svc_user_id: z.string().nullish().describe('ignored: the server sets it from the caller'),
  max_cost_usd: z
    .number()
    .positive()
    .optional()
    .describe("weft's own: stop starting rows once the run's model and judge requests cost this much (USD; every model needs a price)"),
});

export const evaluateModelRes = z.object({ call_id: z.string().describe('id of the Evaluation.evaluate call the run records') });

/** Rows one replay may turn into a dataset (as many as an evaluation runs). */
export const MAX_REPLAY_CALLS = 10_000;

export const evaluationReplayReq = z.object({
  project_id: projectId,
  model_ref: objectRef('the LLMStructuredCompletionModel to replay the calls with'),
  scorer_refs: z.array(objectRef('a scorer object')).max(20).default([]).describe("the scorers each new output gets (the evaluation's)"),
  filter: callFilter.optional().describe('the calls to replay, as /calls/stream_query filters them'),
  query: query.optional(),
  limit: z
    .number()
    .int()
    .min(1)
    .max(MAX_REPLAY_CALLS)
    .default(100)
    .describe(`the first (oldest) calls matched, at most ${MAX_REPLAY_CALLS}`),
  name: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,100}$/, 'letters, digits, _ . - (at most 100)')
    .optional()
    .describe('name of the Dataset and Evaluation objects made (default replay-<dataset digest>)'),
  max_cost_usd: evaluateModelReq.shape.max_cost_usd,
});

export const evaluationReplayRes = z.object({
  call_id: z.string().describe('id of the Evaluation.evaluate call the run records'),
  dataset_ref: z.string().describe('the Dataset made of the calls: their inputs, original_output and source_call'),
  evaluation_ref: z.string().describe('the Evaluation made of that dataset and the scorers'),
});

export const evaluationStatusReq = z.object({
  project_id: projectId,
  call_id: z.string().min(1).describe('the call_id evaluate_model answered'),
});

export const evaluationCancelReq = evaluationStatusReq;

export const evaluationStatusRes = z.object({
  status: z.discriminatedUnion('code', [
    z.object({ code: z.literal('not_found') }),
    z.object({ code: z.literal('running'), completed_rows: z.number().int(), total_rows: z.number().int() }),
    z.object({ code: z.literal('failed'), error: z.string().nullish() }),
    z.object({ code: z.literal('complete'), output: z.record(z.string(), z.unknown()) }),
  ]),
});
export type EvaluationStatus = z.infer<typeof evaluationStatusRes>['status'];

/** Runs one comparison holds at most (the compare view's 2–4). */
export const MAX_EXPORTED_RUNS = 4;
export const EVALUATION_EXPORT_FORMATS = ['csv', 'json', 'jsonl', 'parquet'] as const;

export const evaluationsExportReq = z.object({
  project_id: projectId,
  call_ids: z
    .array(z.string().min(1))
    .min(1)
    .max(MAX_EXPORTED_RUNS, `at most ${MAX_EXPORTED_RUNS} runs`)
    .refine((ids) => new Set(ids).size === ids.length, 'a run named twice')
    .describe("the runs: their Evaluation.evaluate calls' ids, the first the baseline (the compare view's `runs`)"),
  format: z
    .enum(EVALUATION_EXPORT_FORMATS)
    .describe(
      'json: the whole comparison (runs with their summaries, then every example with each run’s result); csv, jsonl, parquet: a row per example and run',
    ),
  regressions_only: z
    .boolean()
    .default(false)
    .describe('only the examples where a run scored worse than the baseline on any score (the view’s "Regressions only")'),
});
export type EvaluationsExportReq = z.infer<typeof evaluationsExportReq>;

/** Server-side evaluations (the inference role runs them) and the compare view's export. */
export const evaluationRouteSpecs = {
  evaluationsEvaluateModel: {
    path: '/evaluations/evaluate_model',
    summary: 'Run an Evaluation against an LLMStructuredCompletionModel on the server; answers the root call id at once',
    auth: 'basic',
    service: 'inference',
    request: evaluateModelReq,
    response: evaluateModelRes,
    published: true,
  },
  evaluationsStatus: {
    path: '/evaluations/status',
    summary: 'Progress of a server-side evaluation: not_found, running (rows done of total), failed, or complete with its summary',
    auth: 'basic',
    service: 'inference',
    request: evaluationStatusReq,
    response: evaluationStatusRes,
    published: true,
  },
  evaluationsCancel: {
    path: '/evaluations/cancel',
    summary:
      "weft's own: cancel a server-side evaluation (no row starts after it; the run ends failed, saying who cancelled); answers its status",
    auth: 'basic',
    service: 'inference',
    request: evaluationCancelReq,
    response: evaluationStatusRes,
    published: true,
  },
  evaluationsReplay: {
    path: '/evaluations/replay',
    summary:
      "weft's own: replay the calls a filter matches through a model object: they become a Dataset (inputs, original output, source call) and an Evaluation with the scorers, run as evaluate_model runs it",
    auth: 'basic',
    service: 'inference',
    request: evaluationReplayReq,
    response: evaluationReplayRes,
    published: true,
  },
  evaluationsExport: {
    path: '/evaluations/export',
    summary:
      "weft's own: 1–4 evaluation runs compared, as a download (the compare view's examples, each run's output with its refs resolved to their values, and scores): CSV, JSON, JSONL or Parquet",
    auth: 'basic',
    service: 'query',
    request: evaluationsExportReq,
    response: z.string().describe('the file: text/csv, application/json, application/jsonl or application/vnd.apache.parquet'),
    stream: 'file',
    published: true,
    lane: 'heavy',
  },
} as const satisfies Record<string, RouteSpec>;
