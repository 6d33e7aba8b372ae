import type { FastifyInstance, FastifyRequest } from 'fastify';
import { delivery, type Entrance } from '@weft/core';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route takes calls in (HTTP calls, OTLP/HTTP, inference): its refusals are counted per project (libs/core delivery.ts). */
    entrance?: Entrance;
  }
  interface FastifyRequest {
    /** What the delivery counts learn of a request on its way: its project, why it was refused, whether its handler ran. */
    weftDelivery?: { project?: string | null; label?: string; handled?: boolean };
  }
}

/** The project a request body names: its own, its start's or end's, or its batch's first call's (a batch spanning projects counts for the first). */
export function projectNamedBy(body: unknown): string | null {
  if (typeof body !== 'object' || body === null) return null;
  const b = body as Record<string, unknown>;
  const of = (v: unknown): string | null => {
    const p = typeof v === 'object' && v !== null ? (v as { project_id?: unknown }).project_id : undefined;
    return typeof p === 'string' && p !== '' ? p : null;
  };
  if (typeof b.project_id === 'string' && b.project_id !== '') return b.project_id;
  const direct = of(b.start) ?? of(b.end);
  if (direct) return direct;
  if (Array.isArray(b.batch) && b.batch.length > 0) {
    const first = b.batch[0] as Record<string, unknown> | null;
    const req = first && typeof first === 'object' ? (first.req as Record<string, unknown> | undefined) : undefined;
    return of(first) ?? of(req?.start) ?? of(req?.end);
  }
  return null;
}

/** The first `"project_id":"…"` of a JSON body's bytes (a body the edge refused to parse, or parsed on a worker thread). */
export function projectInJsonBytes(raw: Uint8Array | null): string | null {
  if (!raw) return null;
  const head = Buffer.from(raw.buffer, raw.byteOffset, Math.min(raw.length, 64 * 1024)).toString('utf8');
  const m = /"project_id"\s*:\s*"([^"\\]{1,256})"/.exec(head);
  return m ? m[1]! : null;
}

const note = (request: FastifyRequest) => (request.weftDelivery ??= {});

export function noteProject(request: FastifyRequest, project: string | null): void {
  if (project) note(request).project = project;
}

/** From the error handler: the refusal's label (admission's reason) and the project its error names. */
export function noteRefusal(request: FastifyRequest, label: string | undefined, project: string | undefined): void {
  if (!request.routeOptions?.config?.entrance) return;
  const d = note(request);
  if (label) d.label = label;
  if (project) d.project = project;
}

export function noteHandled(request: FastifyRequest): void {
  if (request.routeOptions?.config?.entrance) note(request).handled = true;
}

/** The project a request names outside its body: OTLP's `project_id` header, inference's `x-project-id`, a v2 path's entity and project. */
function projectOutsideBody(request: FastifyRequest): string | null {
  const header = (name: string) => {
    const v = request.headers[name];
    const s = Array.isArray(v) ? v[0] : v;
    return s && s.includes('/') ? s.trim() : null;
  };
  const params = request.params as { entity?: string; project?: string } | undefined;
  return header('project_id') ?? header('x-project-id') ?? (params?.entity && params.project ? `${params.entity}/${params.project}` : null);
}

/** Why a request was refused, as a bounded label: admission's own reason, else by its status. */
export function refusalReason(status: number, label: string | undefined): string {
  if (label) return label;
  switch (status) {
    case 400:
    case 415:
    case 422:
      return 'invalid';
    case 401:
      return 'unauthenticated';
    case 403:
      return 'forbidden';
    case 408:
      return 'timeout';
    case 413:
      return 'too_large';
    case 429:
      return 'rate_limited';
    case 503:
      return 'unavailable';
    default:
      return status >= 500 ? 'error' : 'invalid';
  }
}

/**
 * Counts every refusal of a route that takes calls in, per project (when known: before its body
 * is read, only a header or the path can name it) and entrance, by reason. An inference request
 * whose handler ran got the model's answer, not a refusal of weft's: not counted.
 */
export function installDeliveryCounts(app: FastifyInstance): void {
  app.addHook('onResponse', async (request, reply) => {
    const entrance = request.routeOptions.config?.entrance;
    if (!entrance || reply.statusCode < 400) return;
    const d = request.weftDelivery;
    if (entrance === 'inference' && d?.handled) return;
    delivery.refused(d?.project ?? projectOutsideBody(request), entrance, refusalReason(reply.statusCode, d?.label));
  });
}
