import { AttributePathConflictError } from './errors';
import { getOwn, isObject, setOwn } from './values';

/**
 * Flat OTLP attributes (`gen_ai.usage.input_tokens: 5`) → the nested dict the reference
 * stores (`{gen_ai: {usage: {input_tokens: 5}}}`). String values that look like JSON
 * (start with `[` or `{`) are parsed; prefixes whose keys are exactly 0..n-1 (flattened lists
 * such as `gen_ai.prompt.0.content`) become arrays. A key that is both a value and a prefix
 * of another key is an AttributePathConflictError.
 */
export function expandAttributes(flat: Record<string, unknown>): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  // Objects created here for key prefixes; anything else in the tree is a leaf value.
  const branches = new WeakSet<object>([root]);
  for (const key of Object.keys(flat)) {
    const value = parseJsonLooking(flat[key]);
    const parts = key.split('.');
    let node = root;
    for (let i = 0; i < parts.length - 1; i++) {
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
        throw new AttributePathConflictError(parts.slice(0, i + 1).join('.'));
      }
    }
    const last = parts[parts.length - 1]!;
    const existing = getOwn(node, last);
    if (isObject(existing) && branches.has(existing)) throw new AttributePathConflictError(key);
    setOwn(node, last, value);
  }
  // The root stays a dict even when every key is an index (`0.a`): attributes are an object.
  for (const k of Object.keys(root)) root[k] = numericKeysToLists(root[k], branches);
  return root;
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
function numericKeysToLists(v: unknown, branches: WeakSet<object>): unknown {
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

// The convention tables look up the same few dozen paths for every span: split them once.
const splitCache = new Map<string, string[]>();
function splitPath(path: string): string[] {
  let parts = splitCache.get(path);
  if (!parts) {
    parts = path.split('.');
    if (splitCache.size < 10_000) splitCache.set(path, parts);
  }
  return parts;
}

/** The value at a dotted path of a nested dict, or undefined. */
export function getPath(tree: Record<string, unknown>, path: string): unknown {
  let node: unknown = tree;
  for (const part of splitPath(path)) {
    if (Array.isArray(node) && INDEX_RE.test(part)) node = node[Number(part)];
    else if (isObject(node)) node = getOwn(node, part);
    else return undefined;
    if (node === undefined) return undefined;
  }
  return node;
}
