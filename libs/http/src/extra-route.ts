import type { FastifyInstance } from 'fastify';
import type { ExtraEndpointName } from '@weft/api';
import type { Authenticator } from './auth';
import type { ErrorMapper } from './errors';
import { addRoute, type RouteHandler } from './route';

/** @deprecated addRoute takes the extra endpoints' names too; use it. (Kept while branches move over.) */
export function addExtraRoute<N extends ExtraEndpointName>(
  app: FastifyInstance,
  auth: Authenticator,
  name: N,
  handler: RouteHandler<N>,
  options: { mapError?: ErrorMapper } = {},
): void {
  addRoute(app, auth, name, handler, [], options);
}
