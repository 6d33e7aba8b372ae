import { STATUS_CODES } from 'node:http';
import { INVALID_BODY_STATUS } from '@weft/api';
import { ApiError } from '@weft/core';
import type { ErrorMapper } from '@weft/http';

/**
 * The `/v1/...` routes answer errors as vLLM (≥0.10.1) does:
 * `{"error": {"message", "type", "param", "code"}}` with `code` the integer HTTP status.
 * `type` is vLLM's: an exception class name (`BadRequestError`, `NotFoundError`, ...) for
 * errors raised while serving, the HTTP phrase (`Bad Request`) for request validation.
 */
export function openAiError(
  status: number,
  message: string,
  opts: { type?: string; param?: string | null; headers?: Record<string, string> } = {},
): ApiError {
  const type = opts.type ?? httpPhrase(status);
  return new ApiError(status, message, {
    field: opts.param ?? undefined,
    headers: opts.headers,
    body: { error: { message, type, param: opts.param ?? null, code: status } },
  });
}

export const httpPhrase = (status: number) => STATUS_CODES[status] ?? 'Error';

/** vLLM's serving-layer errors (SamplingParams, engine checks): class-name types. */
export const badRequestError = (message: string, param: string | null = null) =>
  openAiError(400, message, { type: 'BadRequestError', param });

/** vLLM's request-validation errors (pydantic validators): HTTP-phrase type. */
export const validationError = (message: string, param: string | null = null) => openAiError(400, message, { type: 'Bad Request', param });

export const modelNotFound = (model: string) =>
  openAiError(404, `The model \`${model}\` does not exist.`, { type: 'NotFoundError', param: 'model' });

/**
 * Route-level mapping for the one error handler: anything failing on a `/v1/...` route
 * (auth, JSON parsing, schema validation, our own `{status, reason}` errors) is rewritten into
 * the OpenAI shape, keeping status, message, offending field and headers.
 */
export const toOpenAiError: ErrorMapper = (e) => {
  if (e.body) return e;
  // These routes take Bearer keys; say so in the challenge.
  const headers = e.status === 401 ? { ...e.headers, 'WWW-Authenticate': 'Bearer' } : e.headers;
  // vLLM answers a body that fails validation with 400 (the trace-server routes say 422).
  const status = e.status === INVALID_BODY_STATUS ? 400 : e.status;
  return openAiError(status, e.reason, { param: e.field ?? null, headers });
};

/** The `message` of an OpenAI-shaped error body (for JSONL/SSE lines and traces). */
export function errorMessage(e: ApiError): string {
  const inner = (e.body?.error as { message?: unknown } | undefined)?.message;
  return typeof inner === 'string' ? inner : e.reason;
}
