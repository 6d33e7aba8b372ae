import { STATUS_CODES } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError, deliveryProjectOf, headerSafe, isApiError, isLimitExceeded, isRetryable, retryAfterOf, type Logger } from '@weft/core';
import { noteRefusal } from './delivery-counts';

/** The response header that repeats a 401's or 403's reason. */
export const WEFT_ERROR_HEADER = 'x-weft-error';

/** Maps anything thrown by a route to an ApiError: the one place errors become responses. */
export function toApiError(err: unknown): ApiError {
  if (isApiError(err)) return err;
  const retryAfter = retryAfterOf(err);
  if (retryAfter !== undefined) {
    // A RetryableError's reason is written for the client; a failure marked unavailable (the
    // store not answering) keeps its own text (addresses, engine messages) in the log.
    const reason = isRetryable(err) ? err.message : 'temporarily unavailable (the store did not answer); retry';
    return new ApiError(503, reason, {
      headers: { 'Retry-After': String(retryAfter) },
      label: isRetryable(err) ? undefined : 'unavailable',
    });
  }
  // A statement past its lane's cap: the request asks too much at once; a narrower one succeeds.
  if (isLimitExceeded(err)) return new ApiError(422, err.message, { label: 'lane_cap' });
  const fe = err as Partial<FastifyError> & { statusCode?: number };
  // The bus's stage refused some parts for good (ack after insert): 422, not worth retrying as is.
  if (fe.name === 'RejectedByStoreError') return new ApiError(422, fe.message ?? 'refused by the store', { label: 'store_refused' });
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError(413, 'request body too large');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError(415, 'unsupported Content-Type; send application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError(400, 'request body: empty JSON body');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError(400, 'request body: Content-Length does not match the body');
  }
  if (err instanceof SyntaxError || fe.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    return new ApiError(400, `request body: invalid JSON (${(err as Error).message})`);
  }
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    return new ApiError(fe.statusCode, fe.message ?? 'bad request');
  }
  return new ApiError(500, 'internal error');
}

/**
 * A route-level error mapping (fastify route `config.mapError`): rewrites the ApiError of
 * anything that fails on that route, including auth, body parsing and validation, e.g. into
 * the OpenAI error shape. The handler below still writes every error response.
 */
export type ErrorMapper = (err: ApiError, request: FastifyRequest) => ApiError;

declare module 'fastify' {
  interface FastifyContextConfig {
    mapError?: ErrorMapper;
  }
}

export function installErrorHandler(app: FastifyInstance, log: Logger): void {
  app.setErrorHandler((err, request, reply) => {
    const mapError = request.routeOptions?.config?.mapError;
    const plain = toApiError(err);
    const api = mapError ? mapError(plain, request) : plain;
    noteRefusal(request, plain.label, deliveryProjectOf(err));
    if (api.status >= 500 && api.status !== 503) {
      log.error({ err, url: request.url, reqId: request.id }, 'request failed');
    } else if (plain.label === 'unavailable') {
      log.warn({ err, url: request.url, reqId: request.id }, 'request refused: the store did not answer');
    }
    if (reply.raw.headersSent) {
      // A stream already started: the only honest signal left is to cut the connection.
      reply.raw.destroy(err as Error);
      return;
    }
    if (api.headers) reply.headers(api.headers);
    // Refused before its body was read: drain it so the client reads this answer, or close.
    app.weftRefusedBodies?.settle(request, reply, api.status);
    // Exporters and SDKs often log a refusal's status line or headers, not its body (the Python
    // OTLP exporter prints the reason phrase): the reason goes in both too.
    if (api.status === 401 || api.status === 403) {
      reply.header(WEFT_ERROR_HEADER, headerSafe(api.reason));
      reply.raw.statusMessage = `${STATUS_CODES[api.status]}: ${headerSafe(api.reason)}`;
    }
    // A script that says so handles 401 itself (the web UI): a Basic challenge would make the
    // browser open its own password prompt over the page.
    if (api.status === 401 && request.headers['x-requested-with'] === 'XMLHttpRequest') reply.removeHeader('WWW-Authenticate');
    if (api.payload) reply.code(api.status).type(api.payload.contentType).send(Buffer.from(api.payload.data));
    else reply.code(api.status).type('application/json').send(api.toBody());
  });
  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send({ status: 404, reason: `no such endpoint: ${request.method} ${request.url.split('?')[0]}` });
  });
}
