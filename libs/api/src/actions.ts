import { z } from 'zod';
import { emptyObject, projectId } from './common';
import type { RouteSpec } from './spec';

/**
 * Actions (Weave 0.52.29's ActionsExecuteBatchReq and ActionSpec): an ActionSpec object run on
 * chosen calls, each result stored as the call's `wandb.runnable.<action name>` feedback.
 */

/** Calls one request runs an action on (the reference runs one; each may be a model call). */
export const MAX_ACTION_CALLS = 100;

export const actionsExecuteBatchReq = z.object({
  project_id: projectId,
  action_ref: z.string().startsWith('weave:///', 'must be a weave:/// object ref').describe('ref of an ActionSpec object'),
  call_ids: z.array(z.string().min(1)).max(MAX_ACTION_CALLS, `at most ${MAX_ACTION_CALLS} calls at a time`),
  svc_user_id: z.string().nullish().describe('ignored: the server sets it from the caller'),
});

/** ActionSpec.config (the reference's discriminated union on `action_type`). */
export const actionConfig = z.discriminatedUnion('action_type', [
  z.object({
    action_type: z.literal('contains_words'),
    target_words: z.array(z.string()),
  }),
  z.object({
    action_type: z.literal('llm_judge'),
    model: z.string().min(1).describe('a model an upstream of WEFT_UPSTREAMS_FILE serves'),
    prompt: z.string(),
    response_schema: z.record(z.string(), z.unknown()).describe('JSON Schema of the answer'),
  }),
]);
export type ActionConfig = z.infer<typeof actionConfig>;
/** The stored ActionSpec object's value (its BaseObject members are not read). */
export const actionSpec = z.object({ name: z.string().nullish(), config: actionConfig });

/** ActionSpecs run on calls. */
export const actionRouteSpecs = {
  actionsExecuteBatch: {
    path: '/actions/execute_batch',
    summary: "Run an ActionSpec (contains_words, llm_judge) on calls; each result is stored as the call's feedback",
    auth: 'basic',
    service: 'inference',
    request: actionsExecuteBatchReq,
    response: emptyObject,
    published: true,
  },
} as const satisfies Record<string, RouteSpec>;
