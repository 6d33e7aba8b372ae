import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  routeSpecs,
  type EndpointSpec,
  type RouteDoc,
  type RouteName,
  type RouteRequestOf,
  type RouteResponseOf,
  type RouteSpec,
} from '@weft/api';
import { type Caller, type Entrance, inLane } from '@weft/core';
import { noteHandled, noteProject, projectNamedBy } from './delivery-counts';
import type { Authenticator } from './auth';
import type { ErrorMapper } from './errors';
import { defaultRequestLimits } from './limits';
import { callerDialect, type Dialect } from './dialect';
import { checkRouteBody } from './route-body';

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
  /**
   * Aborted when the response went out before the handler finished (the whole-request deadline
   * answered 503, timeouts.ts) or the client went away: pass it to store queries so abandoned
   * work stops instead of running on for no one.
   */
  signal: AbortSignal;
  /** The spelling the caller reads answers in (dialect.ts). */
  dialect: Dialect;
}

declare const serializedOf: unique symbol;
/** A response body already serialized (stored JSON sent verbatim, see sendJsonText), of a value of type T. */
export type Serialized<T> = string & { readonly [serializedOf]: T };

/**
 * A handler receives the body validated against its route's request schema and returns the
 * response, typed by the route's response schema: the value, the value already serialized
 * (sendJsonText), or `undefined` when it wrote the response itself (streams).
 */
export type RouteHandler<N extends RouteName> = (
  body: RouteRequestOf<N>,
  ctx: RouteContext,
) => Promise<RouteResponseOf<N> | Serialized<RouteResponseOf<N>> | undefined>;

/**
 * The one way to register a route: one of `routeSpecs` (libs/api: the interface's endpoints and
 * the extra ones). Authenticate (onRequest, before the body is read), count against the
 * caller's per-key rate limit, check the caller's tenancy over every project_id/entity/ref in
 * the body, validate it, check the endpoint's limits, run, respond. Every endpoint added
 * this way gets all of these protections.
 */
export function addRoute<N extends RouteName>(
  app: FastifyInstance,
  auth: Authenticator,
  name: N,
  handler: RouteHandler<N>,
  options: RouteOptions = {},
): void {
  const spec: RouteSpec = routeSpecs[name];
  const limits = app.weftLimits ?? defaultRequestLimits;
  const authenticate = authenticateHook(app, auth, spec.auth);
  const run = async (request: FastifyRequest, reply: FastifyReply) => {
    const caller = request.caller!;
    const sent = spec.urlMembers ? withUrlMembers(request) : request.body;
    const dialect = callerDialect(request.headers, sent);
    let body: RouteRequestOf<N> | null;
    try {
      body = checkRouteBody(name, sent, caller, limits, { refsPossible: request.bodyMayHoldRefs ?? true });
    } finally {
      // The project a refusal (this one, or the handler's) is counted for.
      if (options.entrance) noteProject(request, projectNamedBy(sent));
    }
    if (options.entrance) noteHandled(request);
    // The handler has the body now: neither the request nor this closure keeps it (nor the parsed
    // JSON it came from) alive while the handler waits, e.g. for the bus to acknowledge.
    request.body = undefined;
    return respond(
      request,
      reply,
      (signal) => {
        const taken = body!;
        body = null;
        return handler(taken, { caller, request, reply, signal, dialect });
      },
      spec.lane === 'heavy' ? { lane: 'heavy', project: projectNamedBy(sent) ?? undefined } : undefined,
    );
  };
  const config = { ...routeConfig(spec, options), spec: name };
  const method = spec.method ?? 'POST';
  for (const path of [spec.path, ...(spec.aliases ?? [])]) app.route({ method, url: path, onRequest: authenticate, config, handler: run });
}

/**
 * The request of a route whose URL carries members (the reference's REST routes): the query
 * string's, then the body's, then the path's parameters, which win (the path names the thing).
 * The tenancy check and the schema then see them as any body member.
 */
function withUrlMembers(request: FastifyRequest): unknown {
  const body = request.body;
  if (body !== undefined && body !== null && (typeof body !== 'object' || Array.isArray(body))) return body;
  return {
    ...(request.query as Record<string, unknown> | undefined),
    ...(body as Record<string, unknown> | undefined),
    ...(request.params as Record<string, unknown> | undefined),
  };
}

/**
 * A contract route whose handler gets the body as the bytes sent (null when the request had no
 * body to parse): for write routes whose parse, checks and rows run on worker threads (the
 * gateway's ingest workers), which run checkRouteJsonBody there, the checks addRoute runs here.
 * Authentication, the rate limit, admission and the deadlines are addRoute's.
 */
export function addRawBodyRoute<N extends RouteName>(
  app: FastifyInstance,
  auth: Authenticator,
  name: N,
  handler: (raw: Buffer | null, ctx: RouteContext) => Promise<RouteResponseOf<N>>,
  options: RouteOptions = {},
): void {
  const spec: RouteSpec = routeSpecs[name];
  const authenticate = authenticateHook(app, auth, spec.auth);
  const config = { ...routeConfig(spec, options), spec: name };
  void app.register(async (scope) => {
    // In this scope only, a JSON body stays bytes (415 for other media types, as everywhere).
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, raw, done) => done(null, raw));
    for (const path of [spec.path, ...(spec.aliases ?? [])]) {
      scope.post(path, { onRequest: authenticate, config }, async (request, reply) => {
        const raw = Buffer.isBuffer(request.body) ? request.body : null;
        request.body = undefined;
        const dialect = callerDialect(request.headers, undefined);
        return respond(request, reply, (signal) => handler(raw, { caller: request.caller!, request, reply, signal, dialect }));
      });
    }
  });
}

/** How a route is registered beyond its spec. */
export interface RouteOptions {
  mapError?: ErrorMapper;
  /** The route publishes call parts: admission refuses it while the bus is full or down. */
  publishes?: boolean;
  /** The route takes calls in by this entrance: its refusals are counted per project (delivery-counts.ts). */
  entrance?: Entrance;
}

function routeConfig(spec: RouteSpec, options: RouteOptions) {
  return {
    ...(options.mapError ? { mapError: options.mapError } : {}),
    ...(options.entrance ? { entrance: options.entrance } : {}),
    // Admission refuses these while the bus is full or down (admission.ts).
    ...(options.publishes ? { publishes: true } : {}),
    // Streams, and inference (bounded by the upstream's timeout), have no whole-request deadline (timeouts.ts).
    ...(spec.stream !== undefined || spec.service === 'inference' ? { streaming: true } : {}),
  };
}

/**
 * A GET route (e.g. the OpenAI-compatible `/v1/models`): authentication and the per-key rate
 * limit as for every other route; the handler gets the URL's parameters. (Not in routeSpecs
 * yet: the registry's routes are POST with a JSON body.)
 */
export function addGuardedGet(
  app: FastifyInstance,
  auth: Authenticator,
  path: string,
  scheme: EndpointSpec['auth'],
  handler: (params: Record<string, string>, ctx: RouteContext) => Promise<unknown>,
  options: { mapError?: ErrorMapper; doc: RouteDoc },
): void {
  const authenticate = authenticateHook(app, auth, scheme);
  const config = { doc: options.doc, ...(options.mapError ? { mapError: options.mapError } : {}) };
  app.get(path, { onRequest: authenticate, config }, async (request, reply) => {
    return respond(request, reply, (signal) =>
      handler(request.params as Record<string, string>, {
        caller: request.caller!,
        request,
        reply,
        signal,
        dialect: callerDialect(request.headers, undefined),
      }),
    );
  });
}

/**
 * Runs a handler and returns what fastify should send. The handler's signal aborts when the
 * response went out before it finished (the deadline's 503, timeouts.ts) or the client left;
 * its late result, or the error the abort caused, is then dropped instead of a second reply.
 */
async function respond(
  request: FastifyRequest,
  reply: FastifyReply,
  work: (signal: AbortSignal) => Promise<unknown>,
  heavy?: { lane: 'heavy'; project: string | undefined },
): Promise<unknown> {
  const abandoned = new AbortController();
  let finished = false;
  reply.raw.once('close', () => {
    if (!finished) abandoned.abort();
  });
  let releaseTurn: (() => void) | undefined;
  try {
    // A heavy request takes a turn of its project's and key's (429 past the cap), then runs in the heavy lane.
    if (heavy)
      releaseTurn = await request.server.weftHeavyTurns.acquire(heavy.project, request.caller?.keyId ?? 'anonymous', abandoned.signal);
    // Every statement the handler runs takes the request's lane and its signal: a client that
    // goes away cancels them in the engine (libs/store statements.ts).
    const result = await inLane(heavy?.lane ?? 'interactive', () => work(abandoned.signal), abandoned.signal);
    // Already answered (a stream the handler wrote, or the deadline's 503): nothing more to send.
    if (result === undefined || reply.sent) return reply;
    return result;
  } catch (e) {
    if (!abandoned.signal.aborted || !reply.sent) throw e;
    request.log.info({ reqId: request.id, url: request.url, err: String(e) }, 'abandoned request stopped');
    return reply;
  } finally {
    finished = true;
    releaseTurn?.();
  }
}

/** The onRequest hook of every route: who is calling, then the one per-key rate limit. */
export function authenticateHook(app: FastifyInstance, auth: Authenticator, scheme: RouteSpec['auth']) {
  return async (request: FastifyRequest): Promise<void> => {
    request.caller = await auth.authenticate(request.headers.authorization, scheme);
    await app.weftRateLimit.check(request.caller);
  };
}
