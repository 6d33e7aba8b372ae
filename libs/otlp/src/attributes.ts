import { getOwn, isObject, setOwn } from './values';

/**
 * Flat OTLP attributes (`gen_ai.usage.input_tokens: 5`) → the nested dict the reference
 * stores (`{gen_ai: {usage: {input_tokens: 5}}}`). String values that look like JSON
 * (start with `[` or `{`) are parsed; prefixes whose keys are exactly 0..n-1 (flattened lists
 * such as `gen_ai.prompt.0.content`) become arrays.
 *
 * A key that is both a value and a prefix of other keys (old and new semantic conventions
 * side by side: `db.system` and `db.system.name`) keeps every value, whatever the order: the
 * value stays at its path (`db.system`) and each longer key is stored beside it with the rest
 * of its path as one literal key (`db["system.name"]`). The reference rejects such spans; here
 * nothing is lost. `getPath` finds both.
 */
export function expandAttributes(flat: Record<string, unknown>): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  // Objects created here for key prefixes; anything else in the tree is a leaf value. A Set, not
  // a WeakSet: it lives for one expansion, and weak tables cost the garbage collector more.
  const branches = new Set<object>([root]);
  for (const key of Object.keys(flat)) {
    const value = parseJsonLooking(flat[key]);
    const parts = key.split('.');
    let node = root;
    let i = 0;
    for (; i < parts.length - 1; i++) {
      const part = parts[i]!;
      const next = getOwn(node, part);
      if (next === undefined) {
        const created: Record<string, unknown> = {};
        branches.add(created);
        setOwn(node, part, created);
        node = created;
      } else if (isObject(next) && branches.has(next)) {
        node = next;
      } else {
        break; // a value sits at this prefix: the rest of the key stays literal, beside it
      }
    }
    if (i < parts.length - 1) {
      setOwn(node, parts.slice(i).join('.'), value);
      continue;
    }
    const last = parts[parts.length - 1]!;
    const existing = getOwn(node, last);
    if (isObject(existing) && branches.has(existing)) {
      // Longer keys came first: they move beside this value, the rest of their path literal.
      for (const [k, v] of flattenBranch(existing, last, branches)) setOwn(node, k, v);
    }
    setOwn(node, last, value);
  }
  // The root stays a dict even when every key is an index (`0.a`): attributes are an object.
  for (const k of Object.keys(root)) root[k] = numericKeysToLists(root[k], branches);
  return root;
}

/** The leaves under a prefix branch as `[dotted key, value]`, keys starting with `prefix`. */
function flattenBranch(branch: Record<string, unknown>, prefix: string, branches: Set<object>): [string, unknown][] {
  const out: [string, unknown][] = [];
  for (const k of Object.keys(branch)) {
    const v = branch[k];
    if (isObject(v) && branches.has(v)) out.push(...flattenBranch(v, `${prefix}.${k}`, branches));
    else out.push([`${prefix}.${k}`, v]);
  }
  return out;
}

function parseJsonLooking(v: unknown): unknown {
  if (typeof v !== 'string' || v.length < 2) return v;
  const c = v.charCodeAt(0);
  if (c !== 0x5b /* [ */ && c !== 0x7b /* { */) return v;
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
}

const INDEX_RE = /^(0|[1-9]\d*)$/;

/**
 * Only the dicts made from dotted keys are candidates: a JSON value an attribute carried
 * (`{"0": …}` parsed from a string) is kept as it was sent, and is not walked.
 */
function numericKeysToLists(v: unknown, branches: Set<object>): unknown {
  if (!isObject(v) || !branches.has(v)) return v;
  const keys = Object.keys(v);
  for (const k of keys) v[k] = numericKeysToLists(v[k], branches);
  if (keys.length === 0 || !keys.every((k) => INDEX_RE.test(k))) return v;
  const list: unknown[] = new Array(keys.length);
  for (const k of keys) {
    const i = Number(k);
    if (i >= keys.length) return v; // gaps: not a list
    list[i] = v[k];
  }
  return list;
}

/** A dotted path split once: its parts, and for each part the rest of the path from it as one key. */
interface SplitPath {
  parts: string[];
  rests: string[];
}

// The convention tables look up the same few dozen paths (~75 lookups per span): split them once.
const splitCache = new Map<string, SplitPath>();
function splitPath(path: string): SplitPath {
  let split = splitCache.get(path);
  if (!split) {
    const parts = path.split('.');
    split = { parts, rests: parts.map((_, i) => parts.slice(i).join('.')) };
    if (splitCache.size < 10_000) splitCache.set(path, split);
  }
  return split;
}

/**
 * The value at a dotted path of a nested dict, or undefined. Where a value sits at a prefix
 * of the path, the rest of the path is looked up as one literal key beside it (see
 * expandAttributes).
 */
export function getPath(tree: Record<string, unknown>, path: string): unknown {
  const { parts, rests } = splitPath(path);
  let node: unknown = tree;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    let next: unknown;
    if (Array.isArray(node) && INDEX_RE.test(part)) next = node[Number(part)];
    else if (isObject(node)) next = getOwn(node, part);
    const more = i < parts.length - 1;
    if (more && isObject(node) && (next === undefined || next === null || typeof next !== 'object')) {
      const literal = getOwn(node, rests[i]!);
      if (literal !== undefined) return literal;
    }
    if (next === undefined) return undefined;
    node = next;
  }
  return node;
}
