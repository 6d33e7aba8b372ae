import { z } from 'zod';
import { projectId } from './common';

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
