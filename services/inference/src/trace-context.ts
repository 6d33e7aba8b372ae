/**
 * W3C trace context (`traceparent`, https://www.w3.org/TR/trace-context/): a caller that is
 * itself traced names its span, and weft's record of the model call becomes that span's child
 * (same trace id, parent = the caller's span id), so the caller's trace holds the call once,
 * in place, instead of a second, separate trace of it. A header that does not parse is ignored,
 * as the specification says (the call is then its own trace).
 */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

export interface ParentSpan {
  traceId: string;
  parentId: string;
}

export function parseTraceparent(header: string | string[] | undefined): ParentSpan | null {
  const value = Array.isArray(header) ? header[0] : header;
  const m = value ? TRACEPARENT.exec(value.trim().toLowerCase()) : null;
  if (!m) return null;
  const [, version, traceId, spanId, , rest] = m;
  // Version ff is invalid; version 00 has nothing after the flags; all-zero ids are invalid.
  if (version === 'ff' || (version === '00' && rest)) return null;
  if (/^0+$/.test(traceId!) || /^0+$/.test(spanId!)) return null;
  return { traceId: traceId!, parentId: spanId! };
}
