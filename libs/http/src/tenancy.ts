import { ApiError, badRequest, parseProjectId, type Caller } from '@weft/core';
import { formatPath, RETRY_WITH_PATH } from './json-body';

/**
 * Members whose values are the caller's free-form data (inputs, outputs, payloads, rows,
 * chat messages...). A `project_id` or `entity` inside them is user data, not an address;
 * refs inside them are still checked (a call must not point into another entity).
 */
const FREE_FORM = new Set([
  'inputs',
  'output',
  'attributes',
  'summary',
  'otel_dump',
  'val',
  'payload',
  'row',
  'traces',
  'query',
  'messages',
  'tools',
  'tool_choice',
  'response_format',
  'logit_bias',
  'extra_headers',
  'chat_template_kwargs',
  'mm_processor_kwargs',
  'kv_transfer_params',
  'svc_xargs',
  'documents',
  'structured_outputs',
  'functions',
  'exception',
]);

/** Ref schemes whose first path segment is an entity. */
const REF_SCHEMES = ['weave:///', 'wandb-artifact:///'];

/** The `<entity>/<project>` a ref string points into, or null when it is no ref. */
export function refTarget(s: string): { entity: string; project: string | null } | null {
  for (const scheme of REF_SCHEMES) {
    if (!s.startsWith(scheme)) continue;
    const parts = s.slice(scheme.length).split('/');
    if (!parts[0]) return null;
    return { entity: parts[0], project: parts[1] || null };
  }
  return null;
}

export function mayUseEntity(caller: Caller, entity: string): boolean {
  return caller.isAdmin || caller.entities.includes(entity);
}

/**
 * The tenancy check of every request, applied at the edge to the validated body, whatever
 * the endpoint: every `project_id` and `entity` in the body's structure (nested ones such as
 * `start.project_id`, `batch[i].req.end.project_id`, `obj.project_id` included) and every
 * ref string anywhere (payloads included) must name an entity the caller belongs to, else
 * 403. Membership is judged by name alone, before any lookup, so the answer never tells
 * whether another entity's project or data exists. A ref given in a ref member
 * (`svc_ref`, `call_ref`, `input_refs`, ...) must moreover point into the request's own project.
 */
export function enforceTenancy(caller: Caller, body: unknown, opts: { refsPossible?: boolean } = {}): void {
  const refs = opts.refsPossible ?? true;
  // First without paths (the common, passing case is cheap); a failing body is walked again
  // to name the field.
  try {
    new TenancyWalk(caller, null, refs).visit(body, true, null, false);
  } catch (e) {
    if (e !== RETRY_WITH_PATH) throw e;
    new TenancyWalk(caller, [], refs).visit(body, true, null, false);
  }
}

/**
 * Whether a raw JSON body can hold a ref string at all. A JSON string decoding to a ref spells
 * its scheme literally unless it uses `\u` or `\/` escapes; without any of these, no member
 * can be a ref and the free-form parts of the body need no walk.
 */
export function mayHoldRefs(raw: Buffer | string): boolean {
  return REF_SCHEMES.some((s) => raw.includes(s)) || raw.includes('\\u') || raw.includes('\\/');
}

/**
 * Ref members stored as text and never resolved by the routes that take them, so they may point
 * into another project of an entity the caller belongs to (the entity check still applies):
 * an annotation queue's `scorer_refs`, as the reference stores them. Whoever later reads what
 * they name goes through /refs/read_batch and its own checks. (`/evaluations/evaluate_model`
 * resolves its `scorer_refs` and checks their project itself.)
 */
const STORED_REF_MEMBERS = new Set(['scorer_refs']);

class TenancyWalk {
  constructor(
    private readonly caller: Caller,
    private readonly path: (string | number)[] | null,
    /** False when the body cannot hold refs: free-form parts are then skipped unvisited. */
    private readonly refs: boolean,
  ) {}

  private field(): string {
    if (this.path === null) throw RETRY_WITH_PATH;
    return formatPath(this.path);
  }

  private deny(entity: string): never {
    const field = this.field();
    throw new ApiError(403, `${field}: not a member of entity "${entity}"`, { field });
  }

  private checkRef(s: string, projectId: string | null, refMember: boolean): void {
    // Cheap first test: refs start with 'w' (weave:///, wandb-artifact:///).
    if (s.charCodeAt(0) !== 119) return;
    const target = refTarget(s);
    if (!target) return;
    if (!mayUseEntity(this.caller, target.entity)) this.deny(target.entity);
    if (refMember && projectId && `${target.entity}/${target.project}` !== projectId) {
      const field = this.field();
      throw badRequest(`${field}: ref must point into project ${projectId}`, field);
    }
  }

  visit(v: unknown, structural: boolean, projectId: string | null, refMember: boolean): void {
    if (typeof v === 'string') return this.refs ? this.checkRef(v, projectId, refMember) : undefined;
    if (v === null || typeof v !== 'object' || (!structural && !this.refs)) return;
    const path = this.path;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        path?.push(i);
        this.visit(v[i], structural, projectId, refMember);
        path?.pop();
      }
      return;
    }
    const obj = v as Record<string, unknown>;
    let here = projectId;
    if (structural) {
      if (typeof obj.project_id === 'string') {
        path?.push('project_id');
        const parsed = parseProjectId(obj.project_id);
        if (parsed && !mayUseEntity(this.caller, parsed.entity)) this.deny(parsed.entity);
        path?.pop();
        here = obj.project_id;
      }
      if (typeof obj.entity === 'string') {
        path?.push('entity');
        if (!mayUseEntity(this.caller, obj.entity)) this.deny(obj.entity);
        path?.pop();
      }
    }
    const keys = Object.keys(obj);
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i]!;
      path?.push(k);
      const isRefMember = structural && (k.endsWith('_ref') || k.endsWith('_refs')) && !STORED_REF_MEMBERS.has(k);
      this.visit(obj[k], structural && !FREE_FORM.has(k), here, isRefMember);
      path?.pop();
    }
  }
}
