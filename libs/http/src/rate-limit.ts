import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError, type Caller } from '@weft/core';

/**
 * The per-key rate limit: one counter per API key, shared by every authenticated entrance of
 * the process (contract routes, extra routes, admin routes, /v1, both OTLP/HTTP paths and
 * OTLP/gRPC). Counting uses @fastify/rate-limit's limiter (`createRateLimit`) with a single
 * store, not its per-route configuration, which keeps one counter per route.
 */
export class KeyRateLimiter {
  private readonly limit: ((req: FastifyRequest) => Promise<RateLimitResult>) | null;

  constructor(
    app: FastifyInstance,
    readonly max: number,
    readonly windowMs: number,
  ) {
    this.limit =
      max > 0
        ? (app.createRateLimit({
            max,
            timeWindow: windowMs,
            keyGenerator: (req: FastifyRequest) => `key:${(req as unknown as { weftCaller: Caller }).weftCaller.keyId}`,
          }) as (req: FastifyRequest) => Promise<RateLimitResult>)
        : null;
  }

  /** Counts one request of `caller`; over the limit, a 429 naming the limit and its window. */
  async check(caller: Caller): Promise<void> {
    if (!this.limit) return;
    // The limiter reads only the key (from our generator) and the route's optional rate-limit group.
    const r = await this.limit({ weftCaller: caller, routeOptions: { config: {} } } as unknown as FastifyRequest);
    if (!r.isExceeded) return;
    const retry = Math.max(1, Math.ceil(r.ttl / 1000));
    throw new ApiError(
      429,
      `rate limit exceeded: at most ${this.max} requests per ${describeWindow(this.windowMs)} per API key; retry in ${retry}s`,
      {
        headers: { 'Retry-After': String(retry) },
        extra: { retry_after: retry },
      },
    );
  }
}

interface RateLimitResult {
  isExceeded?: boolean;
  ttl: number;
}

/** `60000` → `60 s window`, `3600000` → `3600 s window`: the window as configured, in words. */
export function describeWindow(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s window` : `${ms} ms window`;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The process's per-key rate limit (see KeyRateLimiter). */
    weftRateLimit: KeyRateLimiter;
  }
}
