import { LosslessNumber, isLosslessNumber, parse } from 'lossless-json';

export { LosslessNumber, isLosslessNumber };

/**
 * Parses JSON keeping what the reference's Python server keeps: a number written with `.`,
 * `e` or `E` stays a float (so `1.0` is not `1`) and big integers keep every digit. Safe
 * integers become plain numbers (so the rest of a request validates as usual); every other
 * number stays a LosslessNumber holding its lexeme. A repeated key keeps the last value,
 * as Python's json.loads does.
 */
export function parseLosslessJson(text: string): unknown {
  return parse(text, null, {
    parseNumber: (lexeme: string) => (isSafeIntegerLexeme(lexeme) ? Number(lexeme) : new LosslessNumber(lexeme)),
    onDuplicateKey: ({ newValue }) => newValue,
  });
}

function isSafeIntegerLexeme(lexeme: string): boolean {
  if (!/^-?\d+$/.test(lexeme)) return false;
  return Number.isSafeInteger(Number(lexeme));
}

/** JSON text already serialised (e.g. a stored `val_dump`) that must be emitted verbatim. */
export class RawJson {
  constructor(readonly text: string) {}
}

/**
 * JSON.stringify that also writes LosslessNumber lexemes, bigints and RawJson verbatim, so
 * values read from storage reach clients exactly as they were written (`1.0` stays `1.0`).
 */
export function toJsonText(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (isLosslessNumber(value)) return (value as LosslessNumber).value;
  if (typeof value === 'bigint') return value.toString();
  if (value === null || typeof value !== 'object') {
    const s = JSON.stringify(value);
    return s === undefined ? 'null' : s;
  }
  if (Array.isArray(value)) return '[' + value.map((v) => (v === undefined ? 'null' : toJsonText(v))).join(',') + ']';
  const parts: string[] = [];
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (v === undefined || typeof v === 'function') continue;
    parts.push(JSON.stringify(k) + ':' + toJsonText(v));
  }
  return '{' + parts.join(',') + '}';
}
