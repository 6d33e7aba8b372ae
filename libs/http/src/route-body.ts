import { parseBody, routeSpecs, type RouteName, type RouteRequestOf, type RouteSpec } from '@weft/api';
import type { Caller } from '@weft/core';
import { parseJsonBody } from './json-body';
import { enforceEndpointLimits, type RequestLimits } from './limits';
import { enforceTenancy, mayHoldRefs } from './tenancy';

/**
 * The checks every contract route runs on its parsed body before its handler (addRoute), in
 * this order: the caller's tenancy over the body as sent (unknown members included: a caller
 * learns nothing about another entity's projects, not even which bodies would be valid there),
 * the route's schema, the endpoint's limits. Pure, so ingest worker threads run the same checks.
 */
export function checkRouteBody<N extends RouteName>(
  name: N,
  body: unknown,
  caller: Caller,
  limits: RequestLimits,
  opts: { refsPossible: boolean },
): RouteRequestOf<N> {
  const spec: RouteSpec = routeSpecs[name];
  enforceTenancy(caller, body, opts);
  const checked = parseBody(spec.request, body) as RouteRequestOf<N>;
  enforceEndpointLimits(checked, { stream: spec.stream !== undefined }, limits);
  return checked;
}

/**
 * checkRouteBody from the body's bytes, parsed as the server's JSON parser does (strict UTF-8,
 * the edge's limits); null for a request that had no body to parse (no Content-Type, no bytes).
 */
export function checkRouteJsonBody<N extends RouteName>(
  name: N,
  raw: Uint8Array | null,
  caller: Caller,
  limits: RequestLimits,
): RouteRequestOf<N> {
  if (raw === null) return checkRouteBody(name, undefined, caller, limits, { refsPossible: true });
  const bytes = Buffer.isBuffer(raw) ? raw : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  return checkRouteBody(name, parseJsonBody(bytes, limits), caller, limits, { refsPossible: mayHoldRefs(bytes) });
}
