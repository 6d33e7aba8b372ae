import type { z } from 'zod';
import { ApiError } from '@weft/core';

/**
 * Parses a request body with its schema. A failure is a 400 whose reason names the first
 * offending field (dotted path) and the problem; all problems are listed in `errors`.
 */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const r = schema.safeParse(body ?? undefined);
  if (r.success) return r.data;
  const errors = r.error.issues.map((i) => ({ field: formatPath(i.path), message: i.message }));
  const first = errors[0]!;
  const reason = first.field ? `${first.field}: ${first.message}` : `request body: ${first.message}`;
  return throwInvalid(reason, first.field, errors);
}

function throwInvalid(reason: string, field: string, errors: { field: string; message: string }[]): never {
  throw new ApiError(400, reason, { field: field || undefined, extra: { errors } });
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += (out ? '.' : '') + String(p);
  }
  return out;
}
