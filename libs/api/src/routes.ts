import type { z } from 'zod';
import { endpoints, type EndpointSpec } from './endpoints';
import { extraEndpoints } from './extra-endpoints';

/**
 * Every route a service serves with addRoute: the interface's 20 and the extra endpoints. One
 * table: the handler's request and response types, the owning service (front proxy routing),
 * auth scheme and limits all come from here.
 */
export const routeSpecs = { ...endpoints, ...extraEndpoints } as const satisfies Record<string, EndpointSpec>;

export type RouteName = keyof typeof routeSpecs;
export type RouteRequestOf<N extends RouteName> = z.infer<(typeof routeSpecs)[N]['request']>;
export type RouteResponseOf<N extends RouteName> = z.infer<(typeof routeSpecs)[N]['response']>;
