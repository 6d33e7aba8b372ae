import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { endpoints, parseBody, type EndpointName, type EndpointSpec, type RequestOf } from '@weft/api';
import { ApiError, type Caller } from '@weft/core';
import type { Authenticator } from './auth';
import type { ErrorMapper } from './errors';
import { defaultRequestLimits, enforceEndpointLimits } from './limits';
import { enforceTenancy } from './tenancy';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the authentication hook of contract routes (addRoute). */
    caller?: Caller;
    /** Set by the JSON body parser: false when no member of the body can be a ref. */
    bodyMayHoldRefs?: boolean;
  }
}

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

/**
 * Registers one endpoint of the contract: authenticate (onRequest, before the body is read),
 * count against the caller's per-key rate limit, check the caller's tenancy over every project_id/entity/ref in
 * the body, validate it, check the endpoint's limits, run, respond. Every endpoint added
 * this way gets all of these protections.
 */
export function addRoute<N extends EndpointName>(
  app: FastifyInstance,
  auth: Authenticator,
  name: N,
  handler: RouteHandler<N>,
  extraPaths: string[] = [],
  options: { mapError?: ErrorMapper; publishes?: boolean } = {},
): void {
  const spec: EndpointSpec = endpoints[name];
  const limits = app.weftLimits ?? defaultRequestLimits;
  const authenticate = authenticateHook(app, auth, spec.auth);
  const run = async (request: FastifyRequest, reply: FastifyReply) => {
    const caller = request.caller!;
    // Tenancy first, on the body as sent (unknown members included): a caller learns nothing
    // about another entity's projects, not even which bodies would be valid there.
    enforceTenancy(caller, request.body, { refsPossible: request.bodyMayHoldRefs ?? true });
    const body = parseBody(spec.request, request.body) as RequestOf<N>;
    enforceEndpointLimits(body, { stream: spec.stream !== undefined }, limits);
    const result = await handler(body, { caller, request, reply });
    if (result === undefined) return reply;
    return result;
  };
  const config = {
    ...(options.mapError ? { mapError: options.mapError } : {}),
    // Admission refuses these while the bus is full or down (admission.ts).
    ...(options.publishes ? { publishes: true } : {}),
    // Streams, and inference (bounded by the upstream's timeout), have no whole-request deadline (timeouts.ts).
    ...(spec.stream !== undefined || spec.service === 'inference' ? { streaming: true } : {}),
  };
  for (const path of [spec.path, ...extraPaths]) app.post(path, { onRequest: authenticate, config }, run);
}

/**
 * A POST route outside the contract (e.g. the reference SDK's /cost/create) with the same
 * protections as addRoute: authentication before the body is read, the per-key rate limit, and
 * the tenancy check of every project_id/entity/ref in the body. The handler validates the body.
 */
export function addGuardedRoute(
  app: FastifyInstance,
  auth: Authenticator,
  path: string,
  scheme: EndpointSpec['auth'],
  handler: (body: unknown, ctx: RouteContext) => Promise<unknown>,
  options: { mapError?: ErrorMapper } = {},
): void {
  const authenticate = authenticateHook(app, auth, scheme);
  const config = options.mapError ? { mapError: options.mapError } : {};
  app.post(path, { onRequest: authenticate, config }, async (request, reply) => {
    const caller = request.caller!;
    enforceTenancy(caller, request.body, { refsPossible: request.bodyMayHoldRefs ?? true });
    const result = await handler(request.body, { caller, request, reply });
    return result === undefined ? reply : result;
  });
}

/**
 * A GET route outside the contract (e.g. the OpenAI-compatible `/v1/models`): authentication
 * and the per-key rate limit as for every other route; the handler gets the URL's parameters.
 */
export function addGuardedGet(
  app: FastifyInstance,
  auth: Authenticator,
  path: string,
  scheme: EndpointSpec['auth'],
  handler: (params: Record<string, string>, ctx: RouteContext) => Promise<unknown>,
  options: { mapError?: ErrorMapper } = {},
): void {
  const authenticate = authenticateHook(app, auth, scheme);
  const config = options.mapError ? { mapError: options.mapError } : {};
  app.get(path, { onRequest: authenticate, config }, async (request, reply) => {
    const result = await handler(request.params as Record<string, string>, { caller: request.caller!, request, reply });
    return result === undefined ? reply : result;
  });
}

/** Placeholder for an endpoint a later issue completes: 501 with what is missing. */
export function notYet(what: string): RouteHandler<EndpointName> {
  return async () => {
    throw new ApiError(501, `not implemented yet: ${what}`);
  };
}

/** The onRequest hook of every route: who is calling, then the one per-key rate limit. */
function authenticateHook(app: FastifyInstance, auth: Authenticator, scheme: EndpointSpec['auth']) {
  return async (request: FastifyRequest): Promise<void> => {
    request.caller = await auth.authenticate(request.headers.authorization, scheme);
    await app.weftRateLimit.check(request.caller);
  };
}
