import { type ApiError, badRequest, payloadTooLarge } from '@weft/core';
import type { RequestLimits } from './limits';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Parses a JSON request body with the edge's limits: valid UTF-8 only, nesting no deeper
 * than `maxJsonDepth`, no string or array over its limit, and no number that overflows to
 * ±Infinity (e.g. `1e400`), which JSON cannot carry back out. Every failure is a 400/413
 * naming the offending field, so nothing malformed reaches a handler.
 */
export function parseJsonBody(raw: Buffer, limits: RequestLimits): unknown {
  const text = decodeBodyText(raw);
  const value = parseJsonText(text);
  // The exact walk over the parsed value only when a cheap scan of the text says a limit may
  // be crossed (the common body is decided by the scan alone).
  if (mayCrossLimits(text, limits)) checkJsonValue(value, limits);
  return value;
}

/**
 * The edge's checks of a JSON body for parsers other than ours (e.g. the lossless parser the
 * object routes use): strict UTF-8, and the limits (depth first, so no recursive parser sees a
 * body nested beyond them). Returns the text to parse.
 */
export function checkedJsonText(raw: Buffer, limits: RequestLimits): string {
  const text = decodeBodyText(raw);
  if (mayCrossLimits(text, limits)) checkJsonValue(parseJsonText(text), limits);
  return text;
}

/** The body as text: strict UTF-8 and not empty, or a 400. */
function decodeBodyText(raw: Buffer): string {
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    throw badRequest('request body: not valid UTF-8');
  }
  if (text.trim() === '') throw badRequest('request body: empty JSON body');
  return text;
}

/** JSON.parse with a 400 naming the syntax error. */
function parseJsonText(text: string): unknown {
  try {
    // V8's JSON.parse is not recursive, so deep nesting cannot overflow the stack here.
    return JSON.parse(text);
  } catch (e) {
    throw badRequest(`request body: invalid JSON (${(e as Error).message})`);
  }
}

/**
 * One pass over the JSON text (valid JSON: it parsed): is any nesting deeper, any string's
 * text longer, or any array longer than the limits, or is a number present that may overflow a
 * double (a 3-digit exponent, or 300+ digits in a row)? False means certainly within the
 * limits; true means the parsed value must be checked exactly (a string's text counts escapes,
 * so it may overestimate).
 */
export function mayCrossLimits(text: string, limits: Pick<RequestLimits, 'maxJsonDepth' | 'maxStringChars' | 'maxArrayItems'>): boolean {
  let depth = 0;
  // Item counts of the open arrays (-1 marks an object), innermost last.
  const counts: number[] = [];
  let digits = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      if (++digits >= 300) return true;
      continue;
    }
    digits = 0;
    switch (c) {
      case 34: {
        // A string: skip to its closing quote with indexOf (native speed over the body's bulk, the
        // string contents); a quote is escaped when an odd run of backslashes precedes it.
        let end = i;
        for (;;) {
          end = text.indexOf('"', end + 1);
          if (end < 0) return true; // (not valid JSON: cannot happen after a parse)
          let backslashes = 0;
          while (text.charCodeAt(end - 1 - backslashes) === 92 /* \ */) backslashes++;
          if ((backslashes & 1) === 0) break;
        }
        if (end - i - 1 > limits.maxStringChars) return true;
        i = end;
        break;
      }
      case 91: // [
        if (++depth > limits.maxJsonDepth) return true;
        counts.push(0);
        break;
      case 123: // {
        if (++depth > limits.maxJsonDepth) return true;
        counts.push(-1);
        break;
      case 93: // ]
      case 125: // }
        depth--;
        counts.pop();
        break;
      case 44: // ,
        if (counts.length && counts[counts.length - 1]! >= 0 && ++counts[counts.length - 1]! >= limits.maxArrayItems) return true;
        break;
      case 101: // e
      case 69: {
        // An exponent (`true`/`false` end in `e` too, never followed by a digit).
        let j = i + 1;
        const sign = text.charCodeAt(j);
        if (sign === 43 || sign === 45) j++;
        let n = 0;
        while (n < 3 && text.charCodeAt(j + n) >= 48 && text.charCodeAt(j + n) <= 57) n++;
        if (n === 3) return true;
        break;
      }
    }
  }
  return false;
}

/** Thrown by a walk that does not track paths; the walk is then redone with them. */
export const RETRY_WITH_PATH = Symbol('retry with path');

type Path = (string | number)[] | null;

/**
 * Checks depth, string and array sizes and finite numbers of an already parsed value. The
 * first pass keeps no path (cheap on the hot path); only a failing body is walked again to
 * name the offending field.
 */
export function checkJsonValue(value: unknown, limits: Pick<RequestLimits, 'maxJsonDepth' | 'maxStringChars' | 'maxArrayItems'>): void {
  try {
    walkLimits(value, 0, limits, null);
  } catch (e) {
    if (e !== RETRY_WITH_PATH) throw e;
    walkLimits(value, 0, limits, []);
  }
}

function failAt(path: Path, make: (field: string) => ApiError): never {
  if (path === null) throw RETRY_WITH_PATH;
  throw make(formatPath(path));
}

// Recursion depth is bounded by maxJsonDepth (checked before descending).
function walkLimits(
  v: unknown,
  depth: number,
  limits: Pick<RequestLimits, 'maxJsonDepth' | 'maxStringChars' | 'maxArrayItems'>,
  path: Path,
): void {
  if (typeof v === 'string') {
    if (v.length > limits.maxStringChars) {
      failAt(path, (f) =>
        payloadTooLarge(`${f || 'request body'}: string longer than ${limits.maxStringChars} characters`, f || undefined),
      );
    }
    return;
  }
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) failAt(path, (f) => badRequest(`${f || 'request body'}: number out of range`, f || undefined));
    return;
  }
  if (v === null || typeof v !== 'object') return;
  if (depth >= limits.maxJsonDepth) {
    failAt(path, (f) => badRequest(`${f || 'request body'}: nested deeper than ${limits.maxJsonDepth} levels`, f || undefined));
  }
  if (Array.isArray(v)) {
    if (v.length > limits.maxArrayItems) {
      failAt(path, (f) => payloadTooLarge(`${f || 'request body'}: more than ${limits.maxArrayItems} items`, f || undefined));
    }
    for (let i = 0; i < v.length; i++) {
      path?.push(i);
      walkLimits(v[i], depth + 1, limits, path);
      path?.pop();
    }
    return;
  }
  const obj = v as Record<string, unknown>;
  const keys = Object.keys(obj);
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    path?.push(k);
    if (k.length > limits.maxStringChars) {
      failAt(path, (f) => payloadTooLarge(`${f}: key longer than ${limits.maxStringChars} characters`, f));
    }
    walkLimits(obj[k], depth + 1, limits, path);
    path?.pop();
  }
}

export function formatPath(path: readonly (string | number)[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : (out ? '.' : '') + p;
  return out;
}
