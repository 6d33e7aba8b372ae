import { ApiError, badRequest, payloadTooLarge } from '@weft/core';
import type { RequestLimits } from './limits';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Parses a JSON request body with the edge's limits: valid UTF-8 only, nesting no deeper
 * than `maxJsonDepth`, no string or array over its limit, and no number that overflows to
 * ±Infinity (e.g. `1e400`), which JSON cannot carry back out. Every failure is a 400/413
 * naming the offending field, so nothing malformed reaches a handler.
 */
export function parseJsonBody(raw: Buffer, limits: RequestLimits): unknown {
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    throw badRequest('request body: not valid UTF-8');
  }
  if (text.trim() === '') throw badRequest('request body: empty JSON body');
  let value: unknown;
  try {
    // V8's JSON.parse is not recursive, so deep nesting cannot overflow the stack here.
    value = JSON.parse(text);
  } catch (e) {
    throw badRequest(`request body: invalid JSON (${(e as Error).message})`);
  }
  checkJsonValue(value, limits);
  return value;
}

/** Checks depth, string and array sizes and finite numbers of an already parsed value. */
export function checkJsonValue(value: unknown, limits: Pick<RequestLimits, 'maxJsonDepth' | 'maxStringChars' | 'maxArrayItems'>): void {
  const path: (string | number)[] = [];
  const fail = (make: (field: string) => ApiError): never => {
    throw make(formatPath(path));
  };
  const visit = (v: unknown, depth: number): void => {
    if (typeof v === 'string') {
      if (v.length > limits.maxStringChars) {
        fail((f) => payloadTooLarge(`${f || 'request body'}: string longer than ${limits.maxStringChars} characters`, f || undefined));
      }
      return;
    }
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) fail((f) => badRequest(`${f || 'request body'}: number out of range`, f || undefined));
      return;
    }
    if (v === null || typeof v !== 'object') return;
    if (depth >= limits.maxJsonDepth) {
      fail((f) => badRequest(`${f || 'request body'}: nested deeper than ${limits.maxJsonDepth} levels`, f || undefined));
    }
    if (Array.isArray(v)) {
      if (v.length > limits.maxArrayItems) {
        fail((f) => payloadTooLarge(`${f || 'request body'}: more than ${limits.maxArrayItems} items`, f || undefined));
      }
      for (let i = 0; i < v.length; i++) {
        path.push(i);
        visit(v[i], depth + 1);
        path.pop();
      }
      return;
    }
    for (const k in v as Record<string, unknown>) {
      if (k.length > limits.maxStringChars) fail((f) => payloadTooLarge(`${f || 'request body'}: key longer than ${limits.maxStringChars} characters`, f || undefined));
      path.push(k);
      visit((v as Record<string, unknown>)[k], depth + 1);
      path.pop();
    }
  };
  // Recursion depth is bounded by maxJsonDepth (checked before descending).
  visit(value, 0);
}

export function formatPath(path: readonly (string | number)[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : (out ? '.' : '') + p;
  return out;
}
