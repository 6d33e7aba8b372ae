import { ApiError, badRequest, parseProjectId, type Caller } from '@weft/core';
import { formatPath } from './json-body';

/**
 * Members whose values are the caller's free-form data (inputs, outputs, payloads, rows,
 * chat messages...). A `project_id` or `entity` inside them is user data, not an address;
 * refs inside them are still checked (a call must not point into another entity).
 */
const FREE_FORM = new Set([
  'inputs', 'output', 'attributes', 'summary', 'otel_dump', 'val', 'payload', 'row', 'traces',
  'query', 'messages', 'tools', 'tool_choice', 'response_format', 'logit_bias', 'extra_headers',
  'chat_template_kwargs', 'mm_processor_kwargs', 'kv_transfer_params', 'svc_xargs', 'documents',
  'structured_outputs', 'functions', 'exception',
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
export function enforceTenancy(caller: Caller, body: unknown): void {
  const path: (string | number)[] = [];
  const deny = (entity: string): never => {
    const field = formatPath(path);
    throw new ApiError(403, `${field}: not a member of entity "${entity}"`, { field });
  };
  const checkRef = (s: string, projectId: string | null, refMember: boolean) => {
    const target = refTarget(s);
    if (!target) return;
    if (!mayUseEntity(caller, target.entity)) deny(target.entity);
    if (refMember && projectId && `${target.entity}/${target.project}` !== projectId) {
      throw badRequest(`${formatPath(path)}: ref must point into project ${projectId}`, formatPath(path));
    }
  };
  const visit = (v: unknown, structural: boolean, projectId: string | null, refMember: boolean): void => {
    if (typeof v === 'string') return checkRef(v, projectId, refMember);
    if (v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        path.push(i);
        visit(v[i], structural, projectId, refMember);
        path.pop();
      }
      return;
    }
    const obj = v as Record<string, unknown>;
    let here = projectId;
    if (structural) {
      if (typeof obj.project_id === 'string') {
        path.push('project_id');
        const parsed = parseProjectId(obj.project_id);
        if (parsed && !mayUseEntity(caller, parsed.entity)) deny(parsed.entity);
        path.pop();
        here = obj.project_id;
      }
      if (typeof obj.entity === 'string') {
        path.push('entity');
        if (!mayUseEntity(caller, obj.entity)) deny(obj.entity);
        path.pop();
      }
    }
    for (const k in obj) {
      path.push(k);
      const isRefMember = structural && (k.endsWith('_ref') || k.endsWith('_refs'));
      visit(obj[k], structural && !FREE_FORM.has(k), here, isRefMember);
      path.pop();
    }
  };
  visit(body, true, null, false);
}
