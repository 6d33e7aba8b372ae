import type { IncomingHttpHeaders } from 'node:http';
import { isJsonObject, svcAliasOf } from '@weft/api';

/**
 * Whose spelling a caller reads answers in: the interface's (`svc_ref`, `svc_user_id`) or the
 * reference's (`weave_ref`, `wb_user_id`), which the Weave SDK validates some answers against
 * with models that forbid other members (0.52's `Feedback`).
 */
export type Dialect = 'interface' | 'reference';

/** Headers only the Weave SDK sends: 0.54's vendored client (Stainless) and its capabilities. */
const REFERENCE_CLIENT_HEADERS = ['x-weave-client-capabilities', 'x-stainless-lang'];

/**
 * The caller's dialect, from what it sent: a Weave SDK header, or a body in the reference's
 * spelling — a `wb_…`/`weave_ref` member, or `null` for an unset optional member (pydantic's
 * `model_dump_json`, which the 0.51–0.52 SDKs send; the interface's callers leave it out).
 * Only the top level is read, so this costs nothing on large bodies.
 */
export function callerDialect(headers: IncomingHttpHeaders, body: unknown): Dialect {
  if (REFERENCE_CLIENT_HEADERS.some((h) => headers[h] !== undefined)) return 'reference';
  if (isJsonObject(body)) {
    for (const [key, value] of Object.entries(body)) if (value === null || svcAliasOf(key) !== null) return 'reference';
  }
  return 'interface';
}
