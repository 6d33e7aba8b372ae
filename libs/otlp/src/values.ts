import { toBigInt } from './time';

/**
 * OTLP `AnyValue` / `KeyValue` → plain JSON values. The same code reads protobufjs-decoded
 * messages (camelCase members, Long integers, Uint8Array bytes, unset oneof members null) and
 * the OTLP/JSON mapping (camelCase or snake_case members, int64 as decimal strings, bytes as
 * base64). Nothing here throws: anything unreadable becomes null.
 */
export type Loose = Record<string, unknown>;

export const isObject = (v: unknown): v is Loose => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A member under its proto3 JSON name or its original (snake_case) name. */
export function member(o: Loose, camel: string, snake: string): unknown {
  const v = o[camel];
  return v === undefined || v === null ? o[snake] : v;
}

export function anyValueToJson(v: unknown, depth = 0): unknown {
  if (!isObject(v) || depth > 64) return null;
  const s = member(v, 'stringValue', 'string_value');
  if (s !== undefined && s !== null) return typeof s === 'string' ? s : String(s);
  const b = member(v, 'boolValue', 'bool_value');
  if (b !== undefined && b !== null) return b === true || b === 'true';
  const i = member(v, 'intValue', 'int_value');
  if (i !== undefined && i !== null) {
    const big = toBigInt(i);
    if (big === null) return null;
    // Beyond 2^53 a JS number would silently change the value: keep the exact digits.
    return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big.toString();
  }
  const d = member(v, 'doubleValue', 'double_value');
  if (d !== undefined && d !== null) {
    const n = typeof d === 'number' ? d : Number(d);
    return Number.isFinite(n) ? n : String(d); // JSON has no NaN/Infinity
  }
  const arr = member(v, 'arrayValue', 'array_value');
  if (isObject(arr)) {
    const values = arr.values;
    return Array.isArray(values) ? values.map((x) => anyValueToJson(x, depth + 1)) : [];
  }
  const kv = member(v, 'kvlistValue', 'kvlist_value');
  if (isObject(kv)) return keyValuesToRecord(kv.values, depth + 1);
  const bytes = member(v, 'bytesValue', 'bytes_value');
  if (bytes instanceof Uint8Array) return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
  if (typeof bytes === 'string') return bytes;
  return null;
}

/** A KeyValue list → `{key: value}` with the dotted keys as they are (flat). */
export function keyValuesToRecord(list: unknown, depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!Array.isArray(list)) return out;
  for (const kv of list) {
    if (!isObject(kv) || typeof kv.key !== 'string') continue;
    setOwn(out, kv.key, anyValueToJson(kv.value, depth));
  }
  return out;
}

/** Assigns an own property even for `__proto__` (a plain assignment would change the prototype). */
export function setOwn(o: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
  else o[key] = value;
}

export function getOwn(o: Record<string, unknown>, key: string): unknown {
  return Object.prototype.hasOwnProperty.call(o, key) ? o[key] : undefined;
}
