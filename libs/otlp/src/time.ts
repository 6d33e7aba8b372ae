import { nanosToMicros } from '@weft/core';
import { SpanConversionError } from './errors';

/** protobufjs hands 64-bit integers over as Long objects (when the `long` package is present). */
interface LongLike {
  low: number;
  high: number;
  unsigned?: boolean;
}
const isLong = (v: unknown): v is LongLike =>
  typeof v === 'object' && v !== null && typeof (v as LongLike).low === 'number' && typeof (v as LongLike).high === 'number';

/** A 64-bit integer as OTLP encodings carry it (decimal string, number, Long, bigint) → bigint, or null. */
export function toBigInt(v: unknown): bigint | null {
  if (typeof v === 'bigint') return v;
  // A JSON number beyond 2^53 already lost digits in JSON.parse; take it as it is (see parseOtlpJson).
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : null;
  if (typeof v === 'string') return /^-?\d{1,20}$/.test(v) ? BigInt(v) : null;
  if (isLong(v)) {
    const big = (BigInt(v.high >>> 0) << 32n) | BigInt(v.low >>> 0);
    return v.unsigned || v.high >= 0 ? big : big - (1n << 64n);
  }
  return null;
}

/** Largest microsecond count a JS number holds exactly (year 2255); ClickHouse's DateTime64(6) goes further. */
const MAX_MICROS = BigInt(Number.MAX_SAFE_INTEGER);

/** `*_time_unix_nano` → epoch microseconds, exact (no float step), or SpanConversionError. */
export function unixNanosToMicros(v: unknown, field: string): number {
  const n = toBigInt(v);
  if (n === null) throw new SpanConversionError(`invalid ${field}: not an unsigned 64-bit integer`);
  if (n <= 0n) throw new SpanConversionError(`invalid ${field}: missing or zero`);
  if (n / 1000n > MAX_MICROS) throw new SpanConversionError(`invalid ${field}: out of range`);
  return nanosToMicros(n);
}
