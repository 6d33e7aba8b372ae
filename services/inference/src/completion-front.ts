import { randomUUID } from 'node:crypto';
import { ApiError, parseProjectId, type Caller, type Logger } from '@weft/core';
import type { RouteContext } from '@weft/http';
import type { CallIngest } from '@weft/ingest';
import { priorityError } from './chat-validation';
import { unsupported, upstreamRequest, type RequestKind } from './dialects';
import { parseTraceparent } from './trace-context';
import { failedBeforeSending, LlmCall, withoutNulls } from './llm-call';
import { parseUpstreamError, type ResponseIdentity } from './normalize';
import { badRequestError, errorMessage, modelNotFound, validationError } from './openai-errors';
import { assertEntityAccess } from './project-access';
import { SseWriter } from './sse';
import { CallerAborted, openUpstreamStream, postUpstream } from './upstream-client';
import { isErrorEvent, upstreamHttpError, UpstreamFailure } from './upstream-errors';
import type { Upstream, UpstreamRegistry } from './upstreams';

/** The fields of a chat or legacy completion request the front itself reads. */
export interface CompletionRequest {
  model?: string | null;
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean | null; continuous_usage_stats?: boolean | null } | null;
  priority?: number;
  request_id?: string;
}

type Json = Record<string, unknown>;

/**
 * What differs between `/v1/chat/completions` and `/v1/completions`: validation, the upstream
 * path and field set, the response shapes, how a stream adds up to the recorded output.
 */
export interface CompletionKind<R extends CompletionRequest> {
  kind: RequestKind;
  opName: string;
  /** `chatcmpl` / `cmpl`: the response id is `<prefix>-<request_id>`. */
  idPrefix: string;
  /** The `object` of stream chunks (the closing usage chunk too). */
  chunkObject: string;
  /** Upstream path under the base URL. */
  path: string;
  /** vLLM's request validators (before the model is resolved); returns the request with vLLM's rewrites. */
  validate(req: R): R;
  /** vLLM's sampling and serving checks (after the model is resolved). */
  validateSampling(req: R): void;
  normalizeWhole(raw: unknown, ident: ResponseIdentity): Json;
  normalizeChunk(raw: Json, ident: ResponseIdentity): { chunk: Json; usage: Json | null; hasChoices: boolean };
  aggregator(model: string): { add(chunk: Json): void; result(): Json };
}

/** Everything a streamed answer needs, decided before the stream opens. */
interface StreamPlan<R extends CompletionRequest> {
  req: R;
  model: string;
  ident: ResponseIdentity;
  payload: Record<string, unknown>;
  priority: number;
  call: LlmCall | null;
  headers: Record<string, string>;
  abort: AbortController;
  upstream: Upstream;
}

/** A completion carrying this header (`<entity>/<project>`) is recorded as a call in that project. */
export const PROJECT_HEADER = 'x-project-id';
/** The id of that recorded call, on the response. */
export const CALL_ID_HEADER = 'x-svc-call-id';
export const REQUEST_ID_HEADER = 'x-request-id';
/**
 * A replay of a recorded call (the UI's playground) names that call here (its id, in the
 * `x-project-id` project); the recorded completion carries it as `attributes.weft.source_call_id`.
 */
export const SOURCE_CALL_HEADER = 'x-weft-source-call-id';

/**
 * An OpenAI-compatible completion route (`/v1/chat/completions[/]`, `/v1/completions`):
 * validate as vLLM does, route by model, translate to the upstream's dialect, forward,
 * normalise, stream, and trace into the `x-project-id` project (under the caller's span when a
 * `traceparent` names one).
 */
export class CompletionFront<R extends CompletionRequest> {
  constructor(
    private readonly kind: CompletionKind<R>,
    private readonly upstreams: UpstreamRegistry,
    private readonly ingest: CallIngest,
    private readonly log: Logger,
  ) {}

  async handle(body: R, ctx: RouteContext): Promise<unknown> {
    const k = this.kind;
    const req = k.validate(body);
    const model = req.model ?? this.upstreams.models[0];
    if (model === undefined) throw modelNotFound('');
    const upstream = this.upstreams.find(model);
    if (!upstream) throw modelNotFound(model);
    k.validateSampling(req);
    const notSupported = unsupported(upstream.dialect, req as Json);
    if (notSupported) throw badRequestError(notSupported[1], notSupported[0]);
    const projectId = tracedProject(ctx.request.headers[PROJECT_HEADER], ctx.caller);
    const sourceCallId = sourceCall(ctx.request.headers[SOURCE_CALL_HEADER], projectId);

    const requestId = req.request_id ?? randomUUID();
    const ident: ResponseIdentity = { id: `${k.idPrefix}-${requestId}`, model, created: Math.floor(Date.now() / 1000) };
    const payload = upstreamRequest(upstream.dialect, { ...(req as Json), model }, { stream: !!req.stream, requestId, kind: k.kind });
    const priority = req.priority ?? 0;
    if (!upstream.priorityScheduling) delete payload.priority;
    const parent = parseTraceparent(ctx.request.headers.traceparent);
    const call = projectId
      ? LlmCall.begin(this.ingest, {
          projectId,
          caller: ctx.caller,
          opName: k.opName,
          inputs: withoutNulls(body as Json),
          traceId: parent?.traceId,
          parentId: parent?.parentId,
          ...(sourceCallId ? { attributes: { weft: { source_call_id: sourceCallId } } } : {}),
        })
      : null;
    const headers: Record<string, string> = { [REQUEST_ID_HEADER]: requestId };
    if (call) headers[CALL_ID_HEADER] = call.id;

    // The client going away aborts the upstream request.
    const abort = new AbortController();
    const res = ctx.reply.raw;
    res.on('close', () => {
      if (!res.writableFinished) abort.abort();
    });

    if (!req.stream) {
      ctx.reply.headers(headers);
      let answer: Record<string, unknown>;
      try {
        // vLLM's engine refuses priorities without priority scheduling (400 when not streaming).
        if (priority !== 0 && !upstream.priorityScheduling) throw priorityError(priority);
        answer = k.normalizeWhole(await postUpstream(upstream, payload, { signal: abort.signal, path: k.path }), ident);
      } catch (e) {
        return failedBeforeSending(ctx, call, model, this.httpError(e));
      }
      await call?.end({ output: answer, model, usage: answer.usage });
      return answer;
    }
    return this.stream(ctx, { req, model, ident, payload, priority, call, headers, abort, upstream });
  }

  private async stream(ctx: RouteContext, s: StreamPlan<R>): Promise<undefined> {
    const { req, model, ident, call, abort, upstream } = s;
    // vLLM: include_usage defaults to true once stream_options is given; without it, no usage.
    const includeUsage = req.stream_options ? (req.stream_options.include_usage ?? true) : false;
    const continuous = includeUsage && !!req.stream_options?.continuous_usage_stats;
    // The call's start is written while the upstream opens its stream: both take a moment.
    const starting = call?.publishStart();
    starting?.catch(() => undefined); // awaited below; this only marks the rejection as handled meanwhile

    let events: Awaited<ReturnType<typeof openUpstreamStream>> | null = null;
    let inBandError: ApiError | null = null;
    if (s.priority !== 0 && !upstream.priorityScheduling) {
      // vLLM reports this one from the engine, i.e. after the stream started.
      inBandError = priorityError(s.priority);
    } else {
      try {
        events = await openUpstreamStream(upstream, s.payload, { signal: abort.signal, path: this.kind.path });
      } catch (e) {
        // Nothing sent yet: a plain error response with its status.
        await starting?.catch(() => undefined);
        return failedBeforeSending(ctx, call, model, this.httpError(e));
      }
    }

    try {
      await starting;
    } catch (e) {
      abort.abort(); // closes the upstream request; the bus failure answers as a 503
      throw e;
    }

    ctx.reply.hijack();
    const sse = new SseWriter(ctx.reply.raw);
    sse.start(s.headers);
    const aggregate = this.kind.aggregator(model);
    let usage: Record<string, unknown> | null = null;
    let exception: string | null = null;
    try {
      if (events) {
        for await (const ev of events) {
          if (isErrorEvent(ev)) {
            const info = parseUpstreamError(ev, 'upstream error');
            inBandError = new ApiError(500, info.message, {
              body: { error: { message: info.message, type: info.type ?? 'InternalServerError', param: info.param, code: errorCode(ev) } },
            });
            break;
          }
          const n = this.kind.normalizeChunk(ev, ident);
          if (n.usage) usage = n.usage;
          aggregate.add(n.usage ? { ...n.chunk, usage: n.usage } : n.chunk);
          // The usage-only chunk is re-emitted by us at the end, in vLLM's form.
          if (!n.hasChoices) continue;
          if (continuous && n.usage) n.chunk.usage = n.usage;
          await sse.data(n.chunk);
          if (sse.closed) break;
        }
      }
    } catch (e) {
      if (!(e instanceof CallerAborted) && !sse.closed) {
        const err = this.httpError(e);
        if (err) inBandError = err;
      }
    } finally {
      await events?.return();
    }
    if (inBandError) {
      exception = errorMessage(inBandError);
      this.log.warn({ upstream: upstream.name, model, requestId: ident.id, error: exception }, 'completion stream ended with an error');
    }
    if (sse.closed) exception ??= 'the client went away before the stream ended';
    if (!sse.closed) {
      if (inBandError) await sse.data(inBandError.toBody());
      else if (includeUsage && usage) {
        await sse.data({ id: ident.id, object: this.kind.chunkObject, created: ident.created, model, choices: [], usage });
      }
      await sse.data('[DONE]');
      sse.end();
    }
    try {
      await call?.end({ output: aggregate.result(), model, usage: usage ?? undefined, exception });
    } catch (e) {
      this.log.error({ err: e, call: call?.id }, 'could not record the end of a completion');
    }
    return undefined;
  }

  /** The ApiError to answer with, or null when the client itself went away. */
  private httpError(e: unknown): ApiError | null {
    if (e instanceof CallerAborted) return null;
    if (e instanceof UpstreamFailure) return upstreamHttpError(e);
    if (e instanceof ApiError) return e;
    throw e;
  }
}

/** The project named by `x-project-id` (the caller must belong to its entity), or null when absent. */
export function tracedProject(header: string | string[] | undefined, caller: Caller): string | null {
  if (header === undefined) return null;
  const value = Array.isArray(header) ? header[0] : header;
  const p = parseProjectId(value ?? '');
  if (!p) throw validationError(`${PROJECT_HEADER}: must be <entity>/<project>`, PROJECT_HEADER);
  assertEntityAccess(caller, p.entity);
  return value!;
}

/** The call a replay names (SOURCE_CALL_HEADER): an id, and only with a traced project to link it in. */
function sourceCall(header: string | string[] | undefined, projectId: string | null): string | null {
  if (header === undefined) return null;
  const value = (Array.isArray(header) ? header[0] : header)?.trim() ?? '';
  if (!/^[\w.:-]{1,128}$/.test(value)) throw validationError(`${SOURCE_CALL_HEADER}: must be a call id`, SOURCE_CALL_HEADER);
  if (!projectId) throw validationError(`${SOURCE_CALL_HEADER}: needs ${PROJECT_HEADER}, the project of that call`, SOURCE_CALL_HEADER);
  return value;
}

/** The integer code of an in-band upstream error, when it carries one. */
function errorCode(ev: Record<string, unknown>): number {
  const e = ev.error as Record<string, unknown> | string;
  if (e && typeof e === 'object' && typeof e.code === 'number') return e.code;
  if (typeof ev.code === 'number') return ev.code;
  return 500;
}
