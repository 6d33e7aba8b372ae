import { post } from './api';
import type { ObjectVersion } from './types';

/**
 * Weave `AnnotationSpec` objects: a named score (`field_schema`, a JSON Schema) people give
 * calls. The score is feedback `wandb.annotation.<object name>` with payload `{value}` and
 * `annotation_ref` naming the spec's version, as the Weave SDK and UI write it; the server
 * checks the value against the schema. Specs published by the SDK
 * (`weave.publish(AnnotationSpec(name=…, field_schema=…))`) and made here are the same objects.
 */
export interface AnnotationSpec {
  /** `weave:///<project>/object/<name>:<digest>`. */
  ref: string;
  /** The object's name: the feedback type is `wandb.annotation.<objectId>`. */
  objectId: string;
  /** The spec's own `name` (what people read), else the object's. */
  label: string;
  description: string | null;
  schema: Record<string, unknown>;
  kind: SpecKind;
  min?: number;
  max?: number;
  options?: (string | number)[];
  maxLength?: number;
  /** Op refs the spec is limited to (`…/op/<name>:<digest>` or `:*`); null: every call. */
  opScope: string[] | null;
}

/** How a spec is asked: `integer` and `number` with their bounds, a choice, yes/no, text; `json` for other schemas. */
export type SpecKind = 'integer' | 'number' | 'boolean' | 'choice' | 'text' | 'json';

export const ANNOTATION_PREFIX = 'wandb.annotation.';
export const annotationType = (s: AnnotationSpec) => `${ANNOTATION_PREFIX}${s.objectId}`;

const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);
const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

export function specFromValue(ref: string, objectId: string, val: unknown): AnnotationSpec {
  const v = isObj(val) ? val : {};
  const schema = isObj(v.field_schema) ? v.field_schema : {};
  const spec: AnnotationSpec = {
    ref,
    objectId,
    label: typeof v.name === 'string' && v.name ? v.name : objectId,
    description: typeof v.description === 'string' && v.description ? v.description : null,
    schema,
    kind: 'json',
    opScope: Array.isArray(v.op_scope) ? v.op_scope.filter((x): x is string => typeof x === 'string') : null,
  };
  const type = schema.type;
  if (Array.isArray(schema.enum) && schema.enum.every((o) => typeof o === 'string' || typeof o === 'number')) {
    spec.kind = 'choice';
    spec.options = schema.enum as (string | number)[];
  } else if (type === 'integer' || type === 'number') {
    spec.kind = type;
    spec.min = num(schema.minimum) ?? num(schema.exclusiveMinimum);
    spec.max = num(schema.maximum) ?? num(schema.exclusiveMaximum);
  } else if (type === 'boolean') spec.kind = 'boolean';
  else if (type === 'string') {
    spec.kind = 'text';
    spec.maxLength = num(schema.maxLength);
  }
  return spec;
}

const specFromObject = (projectId: string, o: ObjectVersion) =>
  specFromValue(`weave:///${projectId}/object/${o.object_id}:${o.digest}`, o.object_id, o.val);

/** The project's specs (latest version of each), by name. */
export async function projectSpecs(projectId: string, signal?: AbortSignal): Promise<AnnotationSpec[]> {
  const r = await post<{ objs: ObjectVersion[] }>(
    '/objs/query',
    {
      project_id: projectId,
      filter: { base_object_classes: ['AnnotationSpec'], latest_only: true },
      sort_by: [{ field: 'object_id', direction: 'asc' }],
      limit: 200,
    },
    signal,
  );
  return r.objs.map((o) => specFromObject(projectId, o));
}

/** The specs named by refs (an annotation queue's `scorer_refs`), in their order; refs that are not specs are left out. */
export async function specsByRef(refs: string[], signal?: AbortSignal): Promise<AnnotationSpec[]> {
  if (refs.length === 0) return [];
  const r = await post<{ vals: unknown[] }>('/refs/read_batch', { refs }, signal);
  const out: AnnotationSpec[] = [];
  refs.forEach((ref, i) => {
    const m = /\/object\/([^/:]+):[^/]+$/.exec(ref);
    const val = r.vals[i];
    if (m && isObj(val) && (val._class_name === 'AnnotationSpec' || isObj(val.field_schema))) out.push(specFromValue(ref, m[1]!, val));
  });
  return out;
}

/** Whether a spec applies to a call of `opName` (its op_scope: exact op versions or `:*` for any). */
export function appliesTo(spec: AnnotationSpec, opName: string): boolean {
  if (!spec.opScope || spec.opScope.length === 0) return true;
  return spec.opScope.some((s) => (s.endsWith(':*') ? opName.startsWith(s.slice(0, -1)) : s === opName));
}

/** Small integer ranges (a 1–5 rating) are asked with a button per value. */
export function integerChoices(spec: AnnotationSpec): number[] | null {
  if (spec.kind !== 'integer' || spec.min === undefined || spec.max === undefined) return null;
  const lo = Math.ceil(spec.min);
  const hi = Math.floor(spec.max);
  if (hi < lo || hi - lo > 10) return null;
  return Array.from({ length: hi - lo + 1 }, (_, i) => lo + i);
}

/** What the user typed, as the spec's value, or why it is not one (the server checks it again). */
export function parseValue(spec: AnnotationSpec, raw: string): { value: unknown } | { error: string } {
  const text = raw.trim();
  switch (spec.kind) {
    case 'integer':
    case 'number': {
      const n = Number(text);
      if (text === '' || !Number.isFinite(n)) return { error: 'a number' };
      if (spec.kind === 'integer' && !Number.isInteger(n)) return { error: 'a whole number' };
      if (spec.min !== undefined && n < spec.min) return { error: `at least ${spec.min}` };
      if (spec.max !== undefined && n > spec.max) return { error: `at most ${spec.max}` };
      return { value: n };
    }
    case 'text':
      if (text === '') return { error: 'some text' };
      if (spec.maxLength !== undefined && text.length > spec.maxLength) return { error: `at most ${spec.maxLength} characters` };
      return { value: text };
    case 'json':
      try {
        return { value: JSON.parse(text) };
      } catch {
        return { error: 'JSON' };
      }
    default:
      return { value: text };
  }
}

/** What a new spec asks: the kinds the Weave UI offers. */
export interface NewSpec {
  name: string;
  description?: string;
  kind: 'integer' | 'number' | 'boolean' | 'choice' | 'text';
  min?: number;
  max?: number;
  options?: string[];
  maxLength?: number;
}

/** An object name from a spec's name (letters, digits, `_`, `.`, `-`: the server's rule). */
export const specObjectId = (name: string) =>
  name
    .trim()
    .replace(/[^\p{L}\p{N}_.-]+/gu, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 128);

export function fieldSchema(s: NewSpec): Record<string, unknown> {
  switch (s.kind) {
    case 'integer':
    case 'number':
      return {
        type: s.kind,
        ...(s.min !== undefined ? { minimum: s.min } : {}),
        ...(s.max !== undefined ? { maximum: s.max } : {}),
      };
    case 'boolean':
      return { type: 'boolean' };
    case 'choice':
      return { type: 'string', enum: s.options ?? [] };
    case 'text':
      return { type: 'string', ...(s.maxLength !== undefined ? { maxLength: s.maxLength } : {}) };
  }
}

/** Publishes a spec as the SDK's `weave.publish(AnnotationSpec(…))` does (a builtin AnnotationSpec object). */
export async function createSpec(projectId: string, s: NewSpec): Promise<AnnotationSpec> {
  const objectId = specObjectId(s.name);
  const val = {
    name: s.name.trim(),
    description: s.description?.trim() || null,
    field_schema: fieldSchema(s),
    unique_among_creators: false,
    op_scope: null,
  };
  const r = await post<{ digest: string }>('/obj/create', {
    obj: { project_id: projectId, object_id: objectId, val, builtin_object_class: 'AnnotationSpec' },
  });
  return specFromValue(`weave:///${projectId}/object/${objectId}:${r.digest}`, objectId, val);
}

/** A value as shown: `true`/`false`, numbers and text as they are, anything else as JSON. */
export function fmtValue(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}
