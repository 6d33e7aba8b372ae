import { randomUUID } from 'node:crypto';
import type { CompletionsCreateReq, ResponseOf } from '@weft/api';
import { ApiError } from '@weft/core';
import { sendJsonl, type RouteContext } from '@weft/http';
import type { CallIngest } from '@weft/ingest';
import { FRONT_OP_NAMES } from '@weft/query';
import { StreamAggregator } from './aggregate';
import { unsupported, upstreamRequest } from './dialects';
import { LlmCall, withoutNulls } from './llm-call';
import { normalizeChunk, normalizeCompletion, parseUpstreamError, type ResponseIdentity } from './normalize';
import { assertProjectAccess } from './project-access';
import { CallerAborted, openUpstreamStream, postUpstream, UpstreamFailure } from './upstream-client';
import { isErrorEvent } from './upstream-errors';
import type { Upstream, UpstreamRegistry } from './upstreams';
import { CUSTOM_PREFIX, CustomProviderError, resolveCustomProvider, type CustomProviderTarget } from './custom-providers';
import type { Store } from '@weft/store';

export const COMPLETIONS_OP_NAME = FRONT_OP_NAMES.completions;

/** Weave-only inputs that are never sent to a model server. */
const NOT_FORWARDED = ['prompt', 'template_vars', 'vertex_credentials', 'timeout', 'extra_headers', 'api_version', 'stream'];
/** Headers `inputs.extra_headers` may not override. */
const PROTECTED_HEADERS = new Set(['authorization', 'content-type', 'content-length', 'host', 'accept', 'connection', 'transfer-encoding']);

type Inputs = CompletionsCreateReq['inputs'];
type Setup = {
  upstream: Upstream;
  model: string;
  /** The key of the recorded usage: the model, or `<provider>/<model>` for a custom provider's. */
  usageKey: string;
  payload: Record<string, unknown>;
  ident: ResponseIdentity;
  timeoutMs?: number;
  headers: Record<string, string>;
};

/**
 * `/completions/create` and `/completions/create_stream`, with the reference's semantics:
 * provider failures are answers (`{"response": {"error": ...}}`, or an `{"error": ...}` line),
 * and with `track_llm_call` the completion is recorded as a `weave.completions_create` call.
 */
export class Completions {
  constructor(
    private readonly upstreams: UpstreamRegistry,
    private readonly ingest: CallIngest,
    private readonly store: Store,
  ) {}

  async create(body: CompletionsCreateReq, ctx: RouteContext): Promise<ResponseOf<'completionsCreate'>> {
    assertProjectAccess(ctx.caller, body.project_id);
    const setup = await this.setup(body.inputs, false, body.project_id);
    if (typeof setup === 'string') return { response: { error: setup }, svc_call_id: null };
    const call = body.track_llm_call ? this.begin(body, ctx) : null;
    const abort = new AbortController();
    ctx.reply.raw.on('close', () => {
      if (!ctx.reply.raw.writableFinished) abort.abort();
    });
    let response: Record<string, unknown>;
    try {
      const raw = await postUpstream(setup.upstream, setup.payload, {
        signal: abort.signal,
        timeoutMs: setup.timeoutMs,
        headers: setup.headers,
      });
      response = normalizeCompletion(raw, setup.ident);
    } catch (e) {
      if (e instanceof UpstreamFailure) response = { error: e.message };
      else if (e instanceof CallerAborted) response = { error: e.message };
      else throw e;
    }
    const error = typeof response.error === 'string' ? response.error : null;
    await call?.end({ output: response, model: setup.usageKey, usage: response.usage ?? undefined, exception: error });
    return { response, svc_call_id: call?.id ?? null };
  }

  async createStream(body: CompletionsCreateReq, ctx: RouteContext): Promise<undefined> {
    assertProjectAccess(ctx.caller, body.project_id);
    const setup = await this.setup(body.inputs, true, body.project_id);
    const abort = new AbortController();
    const call = typeof setup !== 'string' && body.track_llm_call ? this.begin(body, ctx) : null;
    await sendJsonl(ctx.reply, this.lines(setup, call, abort.signal), () => abort.abort());
    return undefined;
  }

  private async *lines(setup: Setup | string, call: LlmCall | null, signal: AbortSignal): AsyncGenerator<Record<string, unknown>> {
    // Setup errors: one error line, no _meta, nothing recorded.
    if (typeof setup === 'string') {
      yield { error: setup };
      return;
    }
    if (call) {
      await call.publishStart();
      yield { _meta: { svc_call_id: call.id } };
    }
    const aggregate = new StreamAggregator(setup.model);
    try {
      const events = await openUpstreamStream(setup.upstream, setup.payload, {
        signal,
        timeoutMs: setup.timeoutMs,
        headers: setup.headers,
      });
      for await (const ev of events) {
        if (isErrorEvent(ev)) {
          yield { error: parseUpstreamError(ev, 'upstream error').message };
          return;
        }
        const n = normalizeChunk(ev, setup.ident);
        const chunk = n.usage ? { ...n.chunk, usage: n.usage } : n.chunk;
        aggregate.add(chunk);
        yield chunk;
      }
    } catch (e) {
      if (e instanceof CallerAborted) return;
      if (e instanceof UpstreamFailure) {
        yield { error: e.message };
        return;
      }
      throw e;
    } finally {
      // Also on error or disconnect: the call ends with what was produced (never an exception, as in the reference).
      await call?.end({ output: aggregate.result(), model: setup.usageKey, usage: aggregate.usageSeen ?? undefined });
    }
  }

  private begin(body: CompletionsCreateReq, ctx: RouteContext): LlmCall {
    const inputs = withoutNulls(body.inputs as Record<string, unknown>);
    delete inputs.vertex_credentials;
    return LlmCall.begin(this.ingest, {
      projectId: body.project_id,
      caller: ctx.caller,
      opName: COMPLETIONS_OP_NAME,
      inputs,
      traceId: body.trace_id,
      parentId: body.parent_id,
    });
  }

  /** Resolves the model and builds the upstream request; a string is a setup error to report. */
  private async setup(inputs: Inputs, stream: boolean, projectId: string): Promise<Setup | string> {
    const model = inputs.model;
    if (inputs.prompt !== undefined && inputs.prompt !== null) {
      return 'Failed to resolve prompt: prompt references are not supported by this server yet';
    }
    let target: Pick<CustomProviderTarget, 'upstream' | 'usageKey' | 'headers'> & { upstreamModel?: string };
    if (model.startsWith(CUSTOM_PREFIX)) {
      try {
        target = await resolveCustomProvider(this.store, projectId, model, this.upstreams.customProviders, this.upstreams.defaultTimeoutMs);
      } catch (e) {
        if (e instanceof CustomProviderError) return e.message;
        throw e;
      }
    } else {
      const upstream = this.upstreams.find(model);
      if (!upstream) return `Model ${model} is not served here: no configured upstream lists it`;
      if (upstream.apiKeyEnv && !upstream.apiKey) {
        // The reference's MissingLLMApiKeyError: a 400 naming the key.
        throw new ApiError(400, `No API key ${upstream.apiKeyEnv} found for model ${model}`, { extra: { api_key: upstream.apiKeyEnv } });
      }
      target = { upstream, usageKey: model, headers: {} };
    }
    const upstream = target.upstream;
    const forwarded: Record<string, unknown> = { ...inputs };
    if (target.upstreamModel !== undefined) forwarded.model = target.upstreamModel;
    // eslint-disable-next-line @typescript-eslint/no-dynamic-delete -- keys from a fixed list
    for (const k of NOT_FORWARDED) delete forwarded[k];
    const notSupported = unsupported(upstream.dialect, forwarded);
    if (notSupported) return `${notSupported[1]}`;
    const requestId = randomUUID();
    const headers: Record<string, string> = {};
    // The request's extra headers, then the custom provider's own.
    for (const [k, v] of [...Object.entries(inputs.extra_headers ?? {}), ...Object.entries(target.headers)]) {
      if (typeof v === 'string' && !PROTECTED_HEADERS.has(k.toLowerCase())) headers[k] = v;
    }
    return {
      upstream,
      model,
      usageKey: target.usageKey,
      payload: upstreamRequest(upstream.dialect, forwarded, { stream, requestId }),
      ident: { id: `chatcmpl-${requestId}`, model, created: Math.floor(Date.now() / 1000) },
      timeoutMs: typeof inputs.timeout === 'number' && inputs.timeout > 0 ? Math.ceil(inputs.timeout * 1000) : undefined,
      headers,
    };
  }
}
