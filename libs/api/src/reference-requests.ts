import type { z } from 'zod';
import { isJsonObject } from './common';

/**
 * The reference's SDK (pydantic `model_dump_json`) sends `null` for every optional member it
 * leaves unset, and W&B's own names (`wb_user_id`, `weave_ref`, `wb_run_ids`…) where our
 * interface says `svc_`. This walk, guided by the request schema, turns such a body into the
 * interface's shape before validation:
 *
 * - a `null` member is dropped when the schema lets the member be absent but does not accept
 *   `null` for it (so `limit: null` is no limit, `filter: null` no filter);
 * - a member named `wb_<x>` (or `weave_ref`) is renamed `svc_<x>` (`svc_ref`) when the schema
 *   has that member and the body does not already carry it.
 *
 * It descends only where the schema describes structure (objects, arrays, unions, records of
 * structured values): user data — inputs, output, val, payload, rows, typed as free JSON — is
 * never touched, so a `null` or a `wb_` key inside it stays exactly as sent.
 */
export function normalizeReferenceRequest(schema: z.ZodType, value: unknown): unknown {
  return walkerOf(schema)(value);
}

/**
 * A schema's walk, compiled once (the schema's structure is fixed; only the body varies): the
 * per-request work is then the body's structural members, with no look-up into zod's
 * definitions, and an object or array nothing changed in is returned as it is, not copied.
 */
type Walker = (value: unknown) => unknown;
const identity: Walker = (v) => v;
const compiled = new WeakMap<z.ZodType, Walker>();

function walkerOf(schema: z.ZodType): Walker {
  const known = compiled.get(schema);
  if (known) return known;
  // A schema reached again while being compiled (recursion) forwards to its finished walk.
  let done: Walker | null = null;
  compiled.set(schema, (v) => done!(v));
  done = compile(schema);
  compiled.set(schema, done);
  return done;
}

type Def = { type: string; [k: string]: unknown };
const defOf = (s: z.ZodType): Def => (s as unknown as { _zod: { def: Def } })._zod.def;
const optIn = (s: z.ZodType): string | undefined => (s as unknown as { _zod: { optin?: string } })._zod.optin;

/** The schema under optional/nullable/default/pipe wrappers: the one that decides the structure. */
function core(schema: z.ZodType): z.ZodType {
  let s = schema;
  for (let i = 0; i < 16; i++) {
    const d = defOf(s);
    if (
      d.type === 'optional' ||
      d.type === 'nullable' ||
      d.type === 'default' ||
      d.type === 'prefault' ||
      d.type === 'readonly' ||
      d.type === 'catch' ||
      d.type === 'nonoptional'
    ) {
      s = d.innerType as z.ZodType;
    } else if (d.type === 'pipe') {
      s = d.in as z.ZodType;
    } else if (d.type === 'lazy') {
      s = (d.getter as () => z.ZodType)();
    } else {
      return s;
    }
  }
  return s;
}

/** The interface's name for a reference member name, or null when it has none. */
export function svcAliasOf(key: string): string | null {
  if (key === 'weave_ref') return 'svc_ref';
  if (key === 'weave_call_id') return 'svc_call_id';
  if (key.startsWith('wb_')) return `svc_${key.slice(3)}`;
  return null;
}

interface MemberPlan {
  walk: Walker;
  /** A `null` here is dropped: the member may be absent but `null` is not one of its values. */
  dropNull: boolean;
}

function compile(schema: z.ZodType): Walker {
  const s = core(schema);
  const d = defOf(s);
  switch (d.type) {
    case 'object':
      return objectWalker(d.shape as Record<string, z.ZodType>);
    case 'array': {
      const element = walkerOf(d.element as z.ZodType);
      if (element === identity) return identity;
      return (value) => (Array.isArray(value) ? mapChanged(value, element) : value);
    }
    case 'record': {
      const valueType = core(d.valueType as z.ZodType);
      const t = defOf(valueType).type;
      if (t === 'unknown' || t === 'any') return identity;
      const member = walkerOf(valueType);
      if (member === identity) return identity;
      return (value) => {
        if (!isJsonObject(value)) return value;
        const out: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(value)) out[k] = member(v);
        return out;
      };
    }
    case 'union':
      return unionWalker(d);
    case 'lazy': {
      // (core() unwraps lazies; only one that recurses past its depth lands here.) Compiled on first use.
      let inner: Walker | null = null;
      return (value) => (inner ??= walkerOf((d.getter as () => z.ZodType)()))(value);
    }
    default:
      return identity;
  }
}

function mapChanged(value: unknown[], element: Walker): unknown[] {
  let out: unknown[] | null = null;
  for (let i = 0; i < value.length; i++) {
    const v = value[i];
    const nv = element(v);
    if (out === null && nv !== v) out = value.slice(0, i);
    if (out !== null) out.push(nv);
  }
  return out ?? value;
}

function objectWalker(shape: Record<string, z.ZodType>): Walker {
  const plans = new Map<string, MemberPlan>();
  for (const key of Object.keys(shape)) {
    const member = shape[key]!;
    plans.set(key, { walk: walkerOf(member), dropNull: optIn(member) !== undefined && !member.safeParse(null).success });
  }
  return (value) => {
    if (!isJsonObject(value)) return value;
    const keys = Object.keys(value);
    // Copied only from the first member that changes (renamed, dropped or walked into a new value).
    let out: Record<string, unknown> | null = null;
    for (let i = 0; i < keys.length; i++) {
      const rawKey = keys[i]!;
      const v = value[rawKey];
      let key = rawKey;
      let plan = plans.get(key);
      if (!plan) {
        const alias = svcAliasOf(key);
        if (alias && plans.has(alias) && !Object.hasOwn(value, alias)) plan = plans.get((key = alias));
      }
      // Unknown members (no plan) are left for the schema to strip or refuse.
      const drop = plan !== undefined && v === null && plan.dropNull;
      const nv = plan === undefined || drop ? v : plan.walk(v);
      if (out === null && (drop || key !== rawKey || nv !== v)) {
        out = {};
        for (let j = 0; j < i; j++) out[keys[j]!] = value[keys[j]!];
      }
      if (out !== null && !drop) out[key] = nv;
    }
    return out ?? value;
  };
}

function unionWalker(d: Def): Walker {
  const options = d.options as z.ZodType[];
  const discriminator = d.discriminator as string | undefined;
  if (discriminator) {
    // The first option whose discriminator accepts the tag.
    const byTag = new Map<unknown, Walker>();
    for (const option of options) {
      const field = defOf(core(option)).shape as Record<string, z.ZodType> | undefined;
      const values =
        field && Object.hasOwn(field, discriminator)
          ? (defOf(core(field[discriminator] as z.ZodType)).values as unknown[] | undefined)
          : undefined;
      for (const tag of values ?? []) if (!byTag.has(tag)) byTag.set(tag, walkerOf(option));
    }
    return (value) => {
      if (!isJsonObject(value)) return value;
      const walk = byTag.get(value[discriminator]);
      return walk ? walk(value) : value;
    };
  }
  // A plain union: the first option the normalized value satisfies (a mismatch is left for the
  // validation error to name).
  const walkers = options.map((o) => walkerOf(o));
  return (value) => {
    for (let i = 0; i < options.length; i++) {
      const candidate = walkers[i]!(value);
      if (options[i]!.safeParse(candidate).success) return candidate;
    }
    return value;
  };
}
