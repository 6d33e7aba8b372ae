import type { EmbeddingReq } from '@weft/api';
import type { RouteContext } from '@weft/http';
import type { ApiError } from '@weft/core';
import type { CallIngest } from '@weft/ingest';
import { LlmCall, withoutNulls } from './llm-call';
import { errorMessage, modelNotFound } from './openai-errors';
import { CallerAborted, postUpstream } from './upstream-client';
import { upstreamHttpError, UpstreamFailure } from './upstream-errors';
import type { UpstreamRegistry } from './upstreams';
import { CALL_ID_HEADER, PROJECT_HEADER, tracedProject } from './completion-front';

export const EMBEDDINGS_OP_NAME = 'weave.embeddings_create';

/**
 * `POST /v1/embeddings`: passed through to the server of the named model (the body as sent,
 * the answer as given, with the model name the client used), recorded as a call when the
 * request carries `x-project-id`.
 */
export class Embeddings {
  constructor(
    private readonly upstreams: UpstreamRegistry,
    private readonly ingest: CallIngest,
  ) {}

  async handle(body: EmbeddingReq, ctx: RouteContext): Promise<unknown> {
    const model = body.model ?? this.upstreams.models[0];
    if (model === undefined) throw modelNotFound('');
    const upstream = this.upstreams.find(model);
    if (!upstream) throw modelNotFound(model);
    const projectId = tracedProject(ctx.request.headers[PROJECT_HEADER], ctx.caller);
    const call = projectId
      ? LlmCall.begin(this.ingest, { projectId, caller: ctx.caller, opName: EMBEDDINGS_OP_NAME, inputs: withoutNulls(body) })
      : null;
    if (call) ctx.reply.header(CALL_ID_HEADER, call.id);

    const abort = new AbortController();
    ctx.reply.raw.on('close', () => {
      if (!ctx.reply.raw.writableFinished) abort.abort();
    });
    let answer: Record<string, unknown>;
    try {
      const raw = await postUpstream(upstream, { ...body, model }, { signal: abort.signal, path: '/embeddings' });
      answer = { ...(raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : { data: raw }), model };
    } catch (e) {
      let err: ApiError | null = null;
      if (e instanceof UpstreamFailure) err = upstreamHttpError(e);
      else if (!(e instanceof CallerAborted)) throw e;
      await call?.end({ output: null, model, exception: err ? errorMessage(err) : 'the client went away' });
      if (err) throw err;
      ctx.reply.hijack();
      return undefined;
    }
    await call?.end({ output: answer, model, usage: answer.usage });
    return answer;
  }
}
