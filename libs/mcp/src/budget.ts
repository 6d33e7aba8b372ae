/**
 * Answers sized for a model's context window. Every answer is JSON text of at most a budget of
 * characters (`max_chars`, default DEFAULT_BUDGET): lists stop at the item that would cross it
 * and say where to go on (`next_cursor`); long values are clipped with a marker that says how
 * much was left out and how to read it whole (get_call's `field`).
 */

/** Characters of JSON per answer unless the call asks otherwise: about 5,000 tokens. */
export const DEFAULT_BUDGET = 20_000;
export const MIN_BUDGET = 2_000;
export const MAX_BUDGET = 200_000;

export interface ClipOptions {
  /** Longest string kept whole. */
  maxString: number;
  /** Most array items and object keys kept. */
  maxItems: number;
  /** Deepest nesting kept. */
  maxDepth: number;
}

export const LIST_CLIP: ClipOptions = { maxString: 200, maxItems: 10, maxDepth: 4 };
export const DETAIL_CLIP: ClipOptions = { maxString: 2_000, maxItems: 50, maxDepth: 8 };

/** A copy of `v` with long strings, long arrays, wide objects and deep nesting cut, each cut marked. */
export function clip(v: unknown, o: ClipOptions, depth = 0): unknown {
  if (typeof v === 'string') return v.length > o.maxString ? `${v.slice(0, o.maxString)}…[+${v.length - o.maxString} chars]` : v;
  if (v === null || typeof v !== 'object') return v;
  if (depth >= o.maxDepth) return `…[${Array.isArray(v) ? `array of ${v.length}` : `object of ${Object.keys(v).length} keys`}]`;
  if (Array.isArray(v)) {
    const kept = v.slice(0, o.maxItems).map((x) => clip(x, o, depth + 1));
    if (v.length > o.maxItems) kept.push(`…[+${v.length - o.maxItems} items]`);
    return kept;
  }
  const keys = Object.keys(v);
  const out: Record<string, unknown> = {};
  for (const k of keys.slice(0, o.maxItems)) out[k] = clip((v as Record<string, unknown>)[k], o, depth + 1);
  if (keys.length > o.maxItems) out['…'] = `+${keys.length - o.maxItems} keys`;
  return out;
}

/**
 * `v` clipped until its JSON is at most `chars` long: first with `o`, then with ever smaller
 * strings and fewer items, at last as the start of its JSON text.
 */
export function fitValue(v: unknown, chars: number, o: ClipOptions = DETAIL_CLIP): unknown {
  let opts = o;
  for (let i = 0; i < 6; i++) {
    const c = clip(v, opts);
    if (jsonSize(c) <= chars) return c;
    opts = {
      maxString: Math.max(20, Math.floor(opts.maxString / 3)),
      maxItems: Math.max(3, Math.floor(opts.maxItems / 2)),
      maxDepth: Math.max(2, opts.maxDepth - 1),
    };
  }
  const text = JSON.stringify(v) ?? 'null';
  return `${text.slice(0, Math.max(0, chars - 30))}…[+${Math.max(0, text.length - chars + 30)} chars]`;
}

export function jsonSize(v: unknown): number {
  return (JSON.stringify(v) ?? '').length;
}

/**
 * How many of `items` (from the first) fit in `budget` characters beside `rest` (the answer
 * without them): at least one, so an answer always moves on.
 */
export function fitting(rest: unknown, items: readonly unknown[], budget: number): number {
  let used = jsonSize(rest) + 120; // the list's key, the cursor and the budget note
  let n = 0;
  for (const item of items) {
    used += jsonSize(item) + 1;
    if (used > budget && n > 0) break;
    n++;
  }
  return n;
}

/**
 * The answer holding as many of `items` (from the first) as fit in `budget`: `build(n)` makes the
 * answer with the first n (its cursor, notes…); n starts at `fitting`'s estimate and shrinks until
 * the whole answer fits. At least one item, so an answer always moves on.
 */
export function fitPage(rest: unknown, items: readonly unknown[], budget: number, build: (n: number) => unknown): unknown {
  let n = fitting(rest, items, budget);
  let out = build(n);
  while (n > 1 && jsonSize(out) > budget) out = build(--n);
  return out;
}

/** Whether any value in `v` carries a clip marker. */
export function clipped(v: unknown): boolean {
  return /…\[/.test(JSON.stringify(v) ?? '');
}

/** The note every answer carries, so a model knows what was cut and why. */
export function budgetNote(budget: number, cut: boolean): { max_chars: number; cut?: string } {
  return cut
    ? { max_chars: budget, cut: 'values marked …[+N] were clipped to fit; get_call with `field` reads one field whole' }
    : { max_chars: budget };
}
