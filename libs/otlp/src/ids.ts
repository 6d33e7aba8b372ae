import { SpanConversionError } from './errors';

/**
 * OTLP ids → the lowercase hex the reference uses as call ids (span: 16 chars) and trace ids
 * (32 chars). Protobuf carries raw bytes; OTLP/JSON carries hex; some JSON encoders (the
 * proto3 canonical mapping of `bytes`) emit base64 instead: all three are accepted.
 */
const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

function bytesToHex(b: Uint8Array): string {
  let s = '';
  for (let i = 0; i < b.length; i++) s += HEX[b[i]!];
  return s;
}

const HEX_RE = /^[0-9a-fA-F]+$/;
const BASE64_RE = /^[A-Za-z0-9+/_-]+={0,2}$/;

/** Hex of an id of `bytes` bytes, '' when absent/empty; throws SpanConversionError when malformed. */
function idHex(value: unknown, bytes: number, field: string): string {
  if (value === undefined || value === null) return '';
  let hex: string | null = null;
  if (value instanceof Uint8Array) {
    if (value.length === 0) return '';
    if (value.length === bytes) hex = bytesToHex(value);
  } else if (typeof value === 'string') {
    if (value === '') return '';
    if (value.length === bytes * 2 && HEX_RE.test(value)) hex = value.toLowerCase();
    else if (value.length === Math.ceil(bytes / 3) * 4 && BASE64_RE.test(value)) {
      const raw = Buffer.from(value, value.includes('-') || value.includes('_') ? 'base64url' : 'base64');
      if (raw.length === bytes) hex = bytesToHex(raw);
    }
  }
  if (hex === null) {
    throw new SpanConversionError(`invalid ${field}: expected ${bytes} bytes as ${bytes * 2} hex characters (or base64)`);
  }
  return hex;
}

const ZERO_SPAN = '0'.repeat(16);
const ZERO_TRACE = '0'.repeat(32);

export function traceIdHex(value: unknown): string {
  const hex = idHex(value, 16, 'trace_id');
  if (hex === '' || hex === ZERO_TRACE) throw new SpanConversionError('invalid trace_id: missing or all zeros');
  return hex;
}

export function spanIdHex(value: unknown): string {
  const hex = idHex(value, 8, 'span_id');
  if (hex === '' || hex === ZERO_SPAN) throw new SpanConversionError('invalid span_id: missing or all zeros');
  return hex;
}

/** The parent's span id, or null for a root span (absent, empty or all zeros). */
export function parentIdHex(value: unknown): string | null {
  const hex = idHex(value, 8, 'parent_span_id');
  return hex === '' || hex === ZERO_SPAN ? null : hex;
}

/** Best-effort hex for messages about a span whose ids may be the reason it was rejected. */
export function idForMessage(value: unknown): string {
  if (value instanceof Uint8Array) return bytesToHex(value);
  if (typeof value === 'string') return value.slice(0, 64);
  return '';
}

/** A log record's trace id: null when absent, empty or all zeros (logs need not belong to a span). */
export function optionalTraceIdHex(value: unknown): string | null {
  const hex = idHex(value, 16, 'trace_id');
  return hex === '' || hex === ZERO_TRACE ? null : hex;
}

/** A log record's span id: null when absent, empty or all zeros. */
export function optionalSpanIdHex(value: unknown): string | null {
  const hex = idHex(value, 8, 'span_id');
  return hex === '' || hex === ZERO_SPAN ? null : hex;
}
