import { isLosslessNumber, type LosslessNumber } from 'lossless-json';

/**
 * Byte-exact emulation of Python's `json.dumps(value, sort_keys=...)` with its defaults
 * (separators `", "` and `": "`, ensure_ascii, floats by repr, NaN/Infinity allowed), because
 * the reference computes digests over that text and refs must interoperate.
 *
 * Numbers: a JS number that is a safe integer is a Python int, any other JS number a float;
 * a LosslessNumber is an int when its lexeme has no `.`/`e`/`E`, else a float; bigint is an int.
 */
export interface PythonDumpOptions {
  sortKeys: boolean;
  /**
   * `python` (default) writes non-finite floats as Python does (`Infinity`, `NaN`), which is not
   * JSON; `storage` writes them as `1e999`/`-1e999`/`null` so the text stays parseable JSON that
   * reads back as the same float.
   */
  nonFinite?: 'python' | 'storage';
}

export function pythonJsonDumps(value: unknown, opts: PythonDumpOptions): string {
  const out: string[] = [];
  write(value, opts, out);
  return out.join('');
}

function write(v: unknown, opts: PythonDumpOptions, out: string[]): void {
  if (v === null || v === undefined) return void out.push('null');
  switch (typeof v) {
    case 'string':
      return void out.push(pythonString(v));
    case 'boolean':
      return void out.push(v ? 'true' : 'false');
    case 'bigint':
      return void out.push(v.toString());
    case 'number':
      return void out.push(Number.isSafeInteger(v) ? String(v === 0 ? 0 : v) : pythonFloat(v, opts));
  }
  if (isLosslessNumber(v)) return void out.push(losslessNumber(v as LosslessNumber, opts));
  if (Array.isArray(v)) {
    out.push('[');
    v.forEach((x, i) => {
      if (i > 0) out.push(', ');
      write(x, opts, out);
    });
    return void out.push(']');
  }
  if (typeof v === 'object') {
    const obj = v as Record<string, unknown>;
    const keys = Object.keys(obj);
    if (opts.sortKeys) keys.sort(compareCodePoints);
    out.push('{');
    keys.forEach((k, i) => {
      if (i > 0) out.push(', ');
      out.push(pythonString(k), ': ');
      write(obj[k], opts, out);
    });
    return void out.push('}');
  }
  throw new TypeError(`not JSON-serialisable: ${typeof v}`);
}

function losslessNumber(n: LosslessNumber, opts: PythonDumpOptions): string {
  const lexeme = n.value;
  if (/^-?\d+$/.test(lexeme)) {
    // Python int: arbitrary precision, `-0` reads as 0.
    const big = BigInt(lexeme);
    return big.toString();
  }
  return pythonFloat(Number(lexeme), opts);
}

/** Python's `repr(float)`: shortest round-trip digits, exponent form below 1e-4 and from 1e16. */
export function pythonFloat(x: number, opts: Pick<PythonDumpOptions, 'nonFinite'> = {}): string {
  if (!Number.isFinite(x)) {
    if (opts.nonFinite === 'storage') return Number.isNaN(x) ? 'null' : x > 0 ? '1e999' : '-1e999';
    return Number.isNaN(x) ? 'NaN' : x > 0 ? 'Infinity' : '-Infinity';
  }
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const [mantissa, expText] = x.toExponential().split('e') as [string, string];
  const exp = Number(expText);
  const neg = mantissa.startsWith('-');
  const digits = mantissa.replace('-', '').replace('.', '');
  const sign = neg ? '-' : '';
  if (exp < -4 || exp >= 16) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  if (digits.length <= exp + 1) return `${sign}${digits}${'0'.repeat(exp + 1 - digits.length)}.0`;
  return `${sign}${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
}

const ESCAPES: Record<string, string> = { '"': '\\"', '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f' };

/**
 * A Python str with ensure_ascii: only printable ASCII (space..`~`) is written as is; every
 * other UTF-16 code unit becomes `\uXXXX` (lowercase hex), so astral characters come out as
 * surrogate pairs exactly as Python writes them. `/` is not escaped.
 */
const NEEDS_ESCAPE = /[^\x20-\x7e]|["\\]/;

export function pythonString(s: string): string {
  if (!NEEDS_ESCAPE.test(s)) return '"' + s + '"';
  return '"' + s.replace(/[^\x20-\x7e]|["\\]/g, (c) => ESCAPES[c] ?? '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0')) + '"';
}

/**
 * Orders strings by Unicode code point (Python's str order), not by UTF-16 code unit (JS's):
 * the two differ when a surrogate (astral char) meets a BMP char in U+E000..U+FFFF.
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

/** Moves surrogates above U+E000..U+FFFF while keeping the order inside each group. */
function codePointRank(unit: number): number {
  if (unit >= 0xd800 && unit <= 0xdfff) return unit + 0x2000;
  if (unit >= 0xe000) return unit - 0x800;
  return unit;
}
