import type { z } from 'zod';

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
  return walk(schema, value);
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

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;

function walk(schema: z.ZodType, value: unknown): unknown {
  const s = core(schema);
  const d = defOf(s);
  switch (d.type) {
    case 'object':
      return isPlainObject(value) ? walkObject(d.shape as Record<string, z.ZodType>, value) : value;
    case 'array':
      return Array.isArray(value) ? value.map((v) => walk(d.element as z.ZodType, v)) : value;
    case 'record': {
      const valueType = core(d.valueType as z.ZodType);
      const t = defOf(valueType).type;
      if (t === 'unknown' || t === 'any' || !isPlainObject(value)) return value;
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[k] = walk(valueType, v);
      return out;
    }
    case 'union':
      return walkUnion(d, value);
    default:
      return value;
  }
}

function walkObject(shape: Record<string, z.ZodType>, value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [rawKey, v] of Object.entries(value)) {
    let key = rawKey;
    // Own members only: a body key such as `toString` is no member of the schema.
    if (!Object.hasOwn(shape, key)) {
      const alias = svcAliasOf(key);
      if (alias && Object.hasOwn(shape, alias) && !Object.hasOwn(value, alias)) key = alias;
    }
    const member = Object.hasOwn(shape, key) ? shape[key] : undefined;
    if (!member) {
      out[key] = v; // unknown members: left for the schema to strip or refuse
      continue;
    }
    if (v === null && optIn(member) !== undefined && !member.safeParse(null).success) continue;
    out[key] = walk(member, v);
  }
  return out;
}

function walkUnion(d: Def, value: unknown): unknown {
  const options = d.options as z.ZodType[];
  const discriminator = d.discriminator as string | undefined;
  if (discriminator && isPlainObject(value)) {
    const tag = value[discriminator];
    for (const option of options) {
      const field = defOf(core(option)).shape as Record<string, z.ZodType> | undefined;
      const values =
        field && Object.hasOwn(field, discriminator)
          ? (defOf(core(field[discriminator] as z.ZodType)).values as unknown[] | undefined)
          : undefined;
      if (values?.includes(tag)) return walk(option, value);
    }
    return value;
  }
  // A plain union: the first option the normalized value satisfies (a mismatch is left for the
  // validation error to name).
  for (const option of options) {
    const candidate = walk(option, value);
    if (option.safeParse(candidate).success) return candidate;
  }
  return value;
}
