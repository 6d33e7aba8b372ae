import type { z } from 'zod';
import { ApiError } from '@weft/core';
import { normalizeReferenceRequest } from './reference-requests';

/**
 * The status of a body that does not fit its schema: 422, as the reference (FastAPI) answers,
 * which its SDK's batch splitting relies on (it splits and retries on 413/422 only). The
 * OpenAI-compatible `/v1/...` routes map it back to vLLM's 400.
 */
export const INVALID_BODY_STATUS = 422;

/**
 * Parses a request body with its schema, after the reference SDK's spellings are read as the
 * interface's (null = absent, `wb_*` = `svc_*`; see normalizeReferenceRequest). A failure is a
 * 422 whose reason names the first offending field (dotted path) and the problem; all problems
 * are listed in `errors`.
 */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const r = schema.safeParse(normalizeReferenceRequest(schema, body ?? undefined));
  if (r.success) return r.data;
  const errors = r.error.issues.map((i) => ({ field: formatPath(i.path), message: i.message }));
  const first = errors[0]!;
  const reason = first.field ? `${first.field}: ${first.message}` : `request body: ${first.message}`;
  const firstIssue = r.error.issues[0]!;
  const status = firstIssue.code === 'custom' && firstIssue.params?.status === 400 ? 400 : INVALID_BODY_STATUS;
  return throwInvalid(status, reason, first.field, errors);
}

function throwInvalid(status: number, reason: string, field: string, errors: { field: string; message: string }[]): never {
  throw new ApiError(status, reason, { field: field || undefined, extra: { errors } });
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += (out ? '.' : '') + String(p);
  }
  return out;
}
