import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { endpoints, parseBody, type EndpointName, type RequestOf } from '@weft/api';
import { ApiError, type Caller } from '@weft/core';
import type { Authenticator } from './auth';
import type { ErrorMapper } from './errors';

export interface RouteContext {
  caller: Caller;
  request: FastifyRequest;
  reply: FastifyReply;
}

/**
 * A handler returns the JSON body, or `undefined` when it wrote the response itself
 * (streams). It receives the body already validated against the contract.
 */
export type RouteHandler<N extends EndpointName> = (body: RequestOf<N>, ctx: RouteContext) => Promise<unknown>;

/** Registers one endpoint of the contract: authenticate, validate, run, respond. */
export function addRoute<N extends EndpointName>(
  app: FastifyInstance,
  auth: Authenticator,
  name: N,
  handler: RouteHandler<N>,
  extraPaths: string[] = [],
  options: { mapError?: ErrorMapper } = {},
): void {
  const spec = endpoints[name];
  const run = async (request: FastifyRequest, reply: FastifyReply) => {
    const caller = await auth.authenticate(request.headers.authorization, spec.auth);
    const body = parseBody(spec.request, request.body) as RequestOf<N>;
    const result = await handler(body, { caller, request, reply });
    if (result === undefined) return reply;
    return result;
  };
  const config = options.mapError ? { mapError: options.mapError } : {};
  for (const path of [spec.path, ...extraPaths]) app.post(path, { config }, run);
}

/** Placeholder for an endpoint a later issue completes: 501 with what is missing. */
export function notYet(what: string): RouteHandler<EndpointName> {
  return async () => {
    throw new ApiError(501, `not implemented yet: ${what}`);
  };
}
