import type { FastifyInstance } from 'fastify';
import { ApiError, badRequest } from '@weft/core';
import { addRoute, type Authenticator } from '@weft/http';
import { callRef, createFeedback, createObject, parseRef } from '@weft/objects';
import { sanitizeForObjectId } from './custom-providers';
import { agentTraceSpans, liveCallBodies, traceIdsOf } from '@weft/query';
import type { Store } from '@weft/store';
import { readScorers, runScorer, type Scorer } from './scorers';
import type { JudgeRecorder } from './judge-model';
import { postUpstream } from './upstream-client';
import { upstreamHttpError, UpstreamFailure } from './upstream-errors';
import type { UpstreamRegistry } from './upstreams';

/** A scorer's result is `wandb.runnable.<scorer name>` feedback on the call, as monitors and Weave's scoring workers write it. */
const RUNNABLE_FEEDBACK_PREFIX = 'wandb.runnable.';

export interface Weave054InferenceDeps {
  store: Store;
  auth: Authenticator;
  upstreams: UpstreamRegistry;
  /** Records the judges' model calls as calls. */
  judges: JudgeRecorder;
  /** Resolves once the writes acknowledged so far are stored. */
  caughtUp?: () => Promise<void>;
}

/**
 * Weave 0.54's routes that run something (libs/api weave054.ts): /calls/score and
 * /evaluations/rescore run scorers as monitors run them (scorers.ts); /image/create asks the
 * model's upstream for images (OpenAI's /images/generations).
 */
export async function weave054InferenceRoutes(app: FastifyInstance, deps: Weave054InferenceDeps): Promise<void> {
  const { store, upstreams } = deps;

  const scorersOf = async (projectId: string, refs: string[]): Promise<Scorer[]> => {
    refs.forEach((r, i) => {
      if (parseRef(r)?.projectId !== projectId)
        throw badRequest(`scorer_refs[${i}]: not an object of project ${projectId}`, `scorer_refs[${i}]`);
    });
    const scorers = await readScorers(store, refs);
    if (scorers.length !== refs.length) throw badRequest('scorer_refs: a scorer ref names no object', 'scorer_refs');
    return scorers;
  };

  /** Scores calls (id, inputs, output) with the scorers; each result becomes the call's runnable feedback. */
  const score = async (projectId: string, userId: string, scorers: Scorer[], calls: { id: string; inputs: unknown; output: unknown }[]) => {
    for (const call of calls) {
      const feedback = [];
      for (const s of scorers) {
        const trace = deps.judges.for(projectId, userId, { call_id: call.id, scorer: s.ref });
        const vars = call.inputs !== null && typeof call.inputs === 'object' ? (call.inputs as Record<string, unknown>) : {};
        const r = await runScorer(store, upstreams, s, call.output, vars, trace);
        const ref = parseRef(s.ref);
        feedback.push({
          project_id: projectId,
          svc_ref: callRef(projectId, call.id),
          feedback_type: RUNNABLE_FEEDBACK_PREFIX + (ref && ref.kind === 'object' ? ref.name : s.name),
          runnable_ref: s.ref,
          payload: 'error' in r ? { output: null, error: r.error } : { output: r.output },
        });
      }
      await createFeedback(store, feedback, userId);
    }
  };
  const parse = (s: string | null): unknown => (s ? (JSON.parse(s) as unknown) : null);

  addRoute(app, deps.auth, 'callsScore', async (b, { caller }) => {
    const scorers = await scorersOf(b.project_id, b.scorer_refs);
    await deps.caughtUp?.();
    const calls = await liveCallBodies(store, b.project_id, [...new Set(b.call_ids)]);
    if (calls.length === 0) throw new ApiError(404, 'call_ids: no such call in the project', { field: 'call_ids' });
    await score(
      b.project_id,
      caller.userId,
      scorers,
      calls.map((c) => ({ id: c.id, inputs: parse(c.inputs_dump), output: parse(c.output_dump) })),
    );
    return {};
  });

  // The run's predictions (each predict_and_score call's model output, with its example as the
  // scorers' arguments) scored again; the results go on the predict_and_score calls.
  addRoute(app, deps.auth, 'evaluationsRescore', async (b, { caller }) => {
    const scorers = await scorersOf(b.project_id, b.scorer_refs);
    await deps.caughtUp?.();
    const spans = await agentTraceSpans(store, b.project_id, await traceIdsOf(store, b.project_id, [b.source_evaluation_run_id]));
    if (!spans.some((s) => s.id === b.source_evaluation_run_id))
      throw new ApiError(404, `source_evaluation_run_id: no evaluation run ${b.source_evaluation_run_id}`, {
        field: 'source_evaluation_run_id',
      });
    const predictions = spans.filter((s) => s.parent_id === b.source_evaluation_run_id && s.op_name.includes('predict_and_score'));
    await score(
      b.project_id,
      caller.userId,
      scorers,
      predictions.map((s) => {
        const inputs = (parse(s.inputs_dump) ?? {}) as Record<string, unknown>;
        const output = (parse(s.output_dump) ?? {}) as Record<string, unknown>;
        const example = inputs.example !== null && typeof inputs.example === 'object' ? inputs.example : {};
        return { id: s.id, inputs: example, output: output.output ?? null };
      }),
    );
    return { call_id: b.source_evaluation_run_id, evaluation_run_id: b.source_evaluation_run_id };
  });

  addRoute(app, deps.auth, 'imageCreate', async (b) => {
    const upstream = upstreams.find(b.inputs.model);
    if (!upstream) throw new ApiError(404, `inputs.model: no upstream serves model '${b.inputs.model}'`, { field: 'inputs.model' });
    try {
      const response = await postUpstream(upstream, { ...b.inputs, n: b.inputs.n ?? 1 }, { path: '/images/generations' });
      return { response: (response ?? {}) as Record<string, unknown>, weave_call_id: null };
    } catch (e) {
      if (e instanceof UpstreamFailure) throw upstreamHttpError(e);
      throw e;
    }
  });

  // A runtime is what weft calls a custom provider: a Provider object (the endpoint, its key's
  // name, headers) and a ProviderModel per model id, which /completions/create reaches as
  // `custom::<runtime>::<id>` (only at base URLs and with keys the operator allows:
  // custom_providers in WEFT_UPSTREAMS_FILE).
  addRoute(app, deps.auth, 'v2RuntimeApply', async (b, { caller }) => {
    const projectId = `${b.entity}/${b.project}`;
    const provider = sanitizeForObjectId(b.runtime_name);
    const headers = b.headers ?? {};
    await createObject(
      store,
      {
        project_id: projectId,
        object_id: provider,
        builtin_object_class: 'Provider',
        val: { name: b.runtime_name, base_url: b.base_url, api_key_name: b.api_key_secret ?? '', extra_headers: headers },
      },
      caller.userId,
    );
    for (const r of b.runtime_ids)
      await createObject(
        store,
        {
          project_id: projectId,
          object_id: `${provider}-${sanitizeForObjectId(r.id)}`,
          builtin_object_class: 'ProviderModel',
          val: { name: r.id, provider, max_tokens: r.max_tokens },
        },
        caller.userId,
      );
    return {
      name: b.runtime_name,
      base_url: b.base_url,
      api_key_secret: b.api_key_secret ?? null,
      headers,
      runtime_ids: b.runtime_ids.map((r) => ({ id: r.id, max_tokens: r.max_tokens, playground_id: `custom::${provider}::${r.id}` })),
    };
  });
}
