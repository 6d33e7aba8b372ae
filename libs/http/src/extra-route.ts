import type { FastifyInstance } from 'fastify';
import { extraEndpoints, parseBody, type ExtraEndpointName, type ExtraEndpointSpec, type ExtraRequestOf } from '@weft/api';
import type { Authenticator } from './auth';
import { defaultRequestLimits, enforceEndpointLimits } from './limits';
import type { ErrorMapper } from './errors';
import { addGuardedRoute, type RouteContext } from './route';

/** Registers one of the extra endpoints (libs/api extra-endpoints): same auth, limits, tenancy, validation and errors as addRoute. */
export function addExtraRoute<N extends ExtraEndpointName>(
  app: FastifyInstance,
  auth: Authenticator,
  name: N,
  handler: (body: ExtraRequestOf<N>, ctx: RouteContext) => Promise<unknown>,
  options: { mapError?: ErrorMapper } = {},
): void {
  const spec: ExtraEndpointSpec = extraEndpoints[name];
  // The edge's protections of addRoute too: auth before the body, per-key rate limit, tenancy.
  const limits = app.weftLimits ?? defaultRequestLimits;
  for (const path of [spec.path, ...(spec.aliases ?? [])]) {
    addGuardedRoute(app, auth, path, spec.auth, async (raw, ctx) => {
      const body = parseBody(spec.request, raw) as ExtraRequestOf<N>;
      // `limit` caps and query-expression size/depth, as on the 20 endpoints.
      enforceEndpointLimits(body, { stream: false }, limits);
      return handler(body, ctx);
    }, options);
  }
}
