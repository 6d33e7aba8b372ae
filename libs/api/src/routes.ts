import type { z } from 'zod';
import { endpoints } from './endpoints';
import type { RouteSpec } from './spec';
import { actionRouteSpecs } from './actions';
import { alertRouteSpecs } from './alerts';
import { analyticsRouteSpecs } from './analytics';
import { annotationQueueRouteSpecs } from './annotation-queues';
import { callStatsRouteSpecs } from './call-stats';
import { callRouteSpecs } from './calls';
import { costRouteSpecs } from './costs';
import { deadLetterRouteSpecs } from './dead-letters';
import { deletionRouteSpecs } from './deletions';
import { deliveryRouteSpecs } from './delivery';
import { evaluationRouteSpecs } from './evaluations';
import { feedbackRouteSpecs } from './feedback';
import { fileRouteSpecs } from './files';
import { inferenceRouteSpecs } from './inference';
import { objectRouteSpecs } from './objects';
import { otelLogRouteSpecs } from './otel-logs';
import { projectSettingRouteSpecs } from './project-settings';
import { tableRouteSpecs } from './tables';
import { usageRouteSpecs } from './usage';
import { userRouteSpecs } from './users';
import { v2RouteSpecs } from './v2-objects';
import { weave054RouteSpecs } from './weave054';

/**
 * Every route group's specs, each declared by its domain beside its schemas (`<domain>.ts`:
 * `…RouteSpecs`). The interface's 20 (`endpoints`) are the published contract; these are the
 * routes beyond them that the reference's clients and weft's own (the web UI, the CLI) call
 * (docs/api.md, "Extra endpoints"), registered and routed the same way (addRoute; the front
 * proxy, by `service`). A new group is one more line here.
 */
const groups = [
  callRouteSpecs,
  callStatsRouteSpecs,
  usageRouteSpecs,
  otelLogRouteSpecs,
  objectRouteSpecs,
  tableRouteSpecs,
  feedbackRouteSpecs,
  costRouteSpecs,
  fileRouteSpecs,
  inferenceRouteSpecs,
  analyticsRouteSpecs,
  projectSettingRouteSpecs,
  deletionRouteSpecs,
  deadLetterRouteSpecs,
  deliveryRouteSpecs,
  userRouteSpecs,
  annotationQueueRouteSpecs,
  actionRouteSpecs,
  evaluationRouteSpecs,
  v2RouteSpecs,
  alertRouteSpecs,
  weave054RouteSpecs,
] as const;

/** The groups' members in one object type (each group's literal types kept). */
type Merged<G extends readonly object[]> = G extends readonly [infer H, ...infer R extends readonly object[]] ? H & Merged<R> : unknown;
type Flat<T> = { [K in keyof T]: T[K] };

/** The groups in one table; a name two groups both declare would leave one unregistered: refused at load. */
function merged<G extends readonly Record<string, RouteSpec>[]>(gs: G): Flat<Merged<G>> {
  const all: Record<string, RouteSpec> = {};
  for (const g of gs)
    for (const [name, spec] of Object.entries(g)) {
      if (Object.hasOwn(all, name) || Object.hasOwn(endpoints, name)) throw new Error(`route spec ${name} declared twice`);
      all[name] = spec;
    }
  return all as unknown as Flat<Merged<G>>;
}

/** The routes beyond the interface's 20: every group above, by name. */
export const extraEndpoints = merged(groups);

/**
 * Every route a service serves with addRoute: the interface's 20 and the extra endpoints. One
 * table: the handler's request and response types, the owning service (front proxy routing),
 * auth scheme, aliases and limits all come from here; so do /openapi.json and the proxy's locations.
 */
export const routeSpecs = { ...endpoints, ...extraEndpoints } as const satisfies Record<string, RouteSpec>;

export type RouteName = keyof typeof routeSpecs;
export type RouteRequestOf<N extends RouteName> = z.infer<(typeof routeSpecs)[N]['request']>;
/** The response schema's type; `unknown` for an extra endpoint whose response is not written down yet. */
export type RouteResponseOf<N extends RouteName> = (typeof routeSpecs)[N] extends { response: infer R extends z.ZodType }
  ? z.infer<R>
  : unknown;

/** The extra endpoints /openapi.json lists (tagged `extra`): those marked `published`, with their response. */
export function publishedExtraEndpoints(): [ExtraEndpointName, RouteSpec & { response: z.ZodType }][] {
  return (Object.entries(extraEndpoints) as [ExtraEndpointName, RouteSpec][]).flatMap(([name, spec]) =>
    spec.published && spec.response
      ? [[name, { ...spec, response: spec.response }] as [ExtraEndpointName, RouteSpec & { response: z.ZodType }]]
      : [],
  );
}

export type ExtraEndpointName = keyof typeof extraEndpoints;
