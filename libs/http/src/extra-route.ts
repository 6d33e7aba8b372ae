import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { extraEndpoints, parseBody, type ExtraEndpointName, type ExtraRequestOf } from '@weft/api';
import type { Authenticator } from './auth';
import type { RouteContext } from './route';

/** Registers one of the extra endpoints (libs/api extra-endpoints): same auth, validation and errors as addRoute. */
export function addExtraRoute<N extends ExtraEndpointName>(
  app: FastifyInstance,
  auth: Authenticator,
  name: N,
  handler: (body: ExtraRequestOf<N>, ctx: RouteContext) => Promise<unknown>,
): void {
  const spec = extraEndpoints[name];
  app.post(spec.path, async (request: FastifyRequest, reply: FastifyReply) => {
    const caller = await auth.authenticate(request.headers.authorization, spec.auth);
    const body = parseBody(spec.request, request.body) as ExtraRequestOf<N>;
    const result = await handler(body, { caller, request, reply });
    return result === undefined ? reply : result;
  });
}
