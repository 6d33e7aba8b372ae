import type { z } from 'zod';
import { endpoints } from './endpoints';
import { extraEndpoints, type ExtraEndpointSpec } from './extra-endpoints';

/**
 * Every route a service serves with addRoute: the interface's 20 and the extra endpoints. One
 * table: the handler's request and response types, the owning service (front proxy routing),
 * auth scheme, aliases and limits all come from here.
 */
export const routeSpecs = { ...endpoints, ...extraEndpoints } as const satisfies Record<string, ExtraEndpointSpec>;

/** What addRoute reads of a spec (the 20's and the extra endpoints' specs both fit). */
export type RouteSpec = ExtraEndpointSpec;

export type RouteName = keyof typeof routeSpecs;
export type RouteRequestOf<N extends RouteName> = z.infer<(typeof routeSpecs)[N]['request']>;
/** The response schema's type; `unknown` for an extra endpoint whose response is not written down yet. */
export type RouteResponseOf<N extends RouteName> = (typeof routeSpecs)[N] extends { response: infer R extends z.ZodType }
  ? z.infer<R>
  : unknown;
