import { randomUUID } from 'node:crypto';
import type { ResponsesReq } from '@weft/api';
import type { ApiError, Logger } from '@weft/core';
import type { RouteContext } from '@weft/http';
import type { CallIngest } from '@weft/ingest';
import { FRONT_OP_NAMES } from '@weft/query';
import { CALL_ID_HEADER, PROJECT_HEADER, REQUEST_ID_HEADER, tracedProject } from './completion-front';
import { failedBeforeSending, LlmCall, withoutNulls } from './llm-call';
import { errorMessage, modelNotFound } from './openai-errors';
import { responsesChoices, responsesMessages } from '@weft/otlp';
import { SseWriter } from './sse';
import { parseTraceparent } from './trace-context';
import { CallerAborted, openUpstreamStream, postUpstream } from './upstream-client';
import { upstreamHttpError, UpstreamFailure } from './upstream-errors';
import type { Upstream, UpstreamRegistry } from './upstreams';

export const RESPONSES_OP_NAME = FRONT_OP_NAMES.responses;

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});

/** Stream events that carry the whole response so far; the last one seen is what the stream produced. */
const SNAPSHOT_EVENTS = new Set([
  'response.created',
  'response.in_progress',
  'response.completed',
  'response.incomplete',
  'response.failed',
]);

/**
 * `POST /v1/responses` (OpenAI Responses API): forwarded as sent to the server of the named model
 * (vLLM and OpenAI serve it), its answer and stream events passed back as given, so the ids the
 * server stores (`previous_response_id`) keep working. With `x-project-id` the exchange is
 * recorded as a call, under the caller's span when a `traceparent` names one; its inputs and
 * output carry the chat reading of the exchange beside the request and the response.
 */
export class ResponsesFront {
  constructor(
    private readonly upstreams: UpstreamRegistry,
    private readonly ingest: CallIngest,
    private readonly log: Logger,
  ) {}

  async handle(body: ResponsesReq, ctx: RouteContext): Promise<unknown> {
    const model = body.model ?? this.upstreams.models[0];
    if (model === undefined) throw modelNotFound('');
    const upstream = this.upstreams.find(model);
    if (!upstream) throw modelNotFound(model);
    const projectId = tracedProject(ctx.request.headers[PROJECT_HEADER], ctx.caller);
    const parent = parseTraceparent(ctx.request.headers.traceparent);
    const call = projectId
      ? LlmCall.begin(this.ingest, {
          projectId,
          caller: ctx.caller,
          opName: RESPONSES_OP_NAME,
          inputs: { ...withoutNulls(body as Json), messages: responsesMessages(body) },
          traceId: parent?.traceId,
          parentId: parent?.parentId,
        })
      : null;
    const requestId = typeof ctx.request.headers[REQUEST_ID_HEADER] === 'string' ? ctx.request.headers[REQUEST_ID_HEADER] : randomUUID();
    const headers: Record<string, string> = { [REQUEST_ID_HEADER]: requestId };
    if (call) headers[CALL_ID_HEADER] = call.id;
    const payload = { ...(body as Json), model };

    const abort = new AbortController();
    ctx.reply.raw.on('close', () => {
      if (!ctx.reply.raw.writableFinished) abort.abort();
    });
    if (body.stream) return this.stream(ctx, { upstream, model, payload, call, headers, abort });

    ctx.reply.headers(headers);
    let answer: Json;
    try {
      answer = obj(await postUpstream(upstream, payload, { signal: abort.signal, path: '/responses' }));
    } catch (e) {
      return failedBeforeSending(ctx, call, model, httpError(e));
    }
    await call?.end({ output: recordedOutput(answer), model, usage: answer.usage ?? undefined });
    return answer;
  }

  private async stream(
    ctx: RouteContext,
    s: { upstream: Upstream; model: string; payload: Json; call: LlmCall | null; headers: Record<string, string>; abort: AbortController },
  ): Promise<undefined> {
    const { upstream, model, call } = s;
    const starting = call?.publishStart();
    starting?.catch(() => undefined); // awaited below; this only marks the rejection as handled meanwhile
    let events: Awaited<ReturnType<typeof openUpstreamStream>>;
    try {
      events = await openUpstreamStream(upstream, s.payload, { signal: s.abort.signal, path: '/responses' });
    } catch (e) {
      // Nothing sent yet: a plain error response with its status.
      await starting?.catch(() => undefined);
      return failedBeforeSending(ctx, call, model, httpError(e));
    }
    try {
      await starting;
    } catch (e) {
      s.abort.abort();
      throw e;
    }

    ctx.reply.hijack();
    const sse = new SseWriter(ctx.reply.raw);
    sse.start(s.headers);
    let snapshot: Json | null = null;
    let text = '';
    let exception: string | null = null;
    let sequence = 0;
    try {
      for await (const ev of events) {
        const type = typeof ev.type === 'string' ? ev.type : 'message';
        if (typeof ev.sequence_number === 'number') sequence = ev.sequence_number;
        if (SNAPSHOT_EVENTS.has(type)) snapshot = obj(ev.response);
        if (type === 'response.output_text.delta' && typeof ev.delta === 'string') text += ev.delta;
        if (type === 'error' || type === 'response.failed') exception = errorText(ev);
        await sse.event(type, ev);
        if (sse.closed) break;
      }
    } catch (e) {
      if (!(e instanceof CallerAborted) && !sse.closed) {
        const err = httpError(e);
        if (err) {
          exception = errorMessage(err);
          // OpenAI's in-band error event: the stream started, so the status cannot say it.
          await sse.event('error', {
            type: 'error',
            code: String(err.status),
            message: exception,
            param: null,
            sequence_number: sequence + 1,
          });
        }
      }
    } finally {
      await events.return();
    }
    if (sse.closed) exception ??= 'the client went away before the stream ended';
    else sse.end();
    if (exception) this.log.warn({ upstream: upstream.name, model, error: exception }, 'responses stream ended with an error');
    // Cut short before the final snapshot: the text streamed so far is what was produced.
    const output = snapshot ?? {};
    if (text && responsesChoices(output).length === 0) {
      output.output = [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] }];
    }
    try {
      await call?.end({ output: recordedOutput(output), model, usage: output.usage ?? undefined, exception });
    } catch (e) {
      this.log.error({ err: e, call: call?.id }, 'could not record the end of a response');
    }
    return undefined;
  }
}

/** The response as the server gave it, with its chat reading as `choices`. */
function recordedOutput(response: Json): Json {
  return { ...response, choices: responsesChoices(response) };
}

function errorText(ev: Json): string {
  const e = obj(ev.type === 'response.failed' ? obj(ev.response).error : ev);
  return typeof e.message === 'string' ? e.message : 'the response failed';
}

/** The ApiError to answer with, or null when the client itself went away. */
function httpError(e: unknown): ApiError | null {
  if (e instanceof CallerAborted) return null;
  if (e instanceof UpstreamFailure) return upstreamHttpError(e);
  throw e;
}
