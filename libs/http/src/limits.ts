import type { Config } from '@weft/core';
import { badRequest, loadConfig, payloadTooLarge } from '@weft/core';

/**
 * The request limits the HTTP edge enforces for every endpoint. They come from the
 * configuration (docs/security.md); services that build their own server pass theirs.
 */
export interface RequestLimits {
  maxJsonDepth: number;
  maxStringChars: number;
  maxArrayItems: number;
  maxStreamLimit: number;
  maxPageLimit: number;
  maxQueryBytes: number;
  maxQueryDepth: number;
  /** Call values over this many bytes of JSON are stored truncated (WEFT_MAX_VALUE_BYTES; 0: never). */
  maxValueBytes: number;
  /** Requests per API key per window; 0 disables rate limiting. */
  rateLimitMax: number;
  rateLimitWindowMs: number;
  /** Admission before the body is read (admission.ts). */
  maxInflightBodyBytes: number;
  maxInflightRequests: number;
  /** Refused, unread bodies read and discarded at once, and for how long (refused-body.ts). */
  refusedBodyDrainBytes: number;
  refusedBodyDrainMs: number;
  /** Timeouts of the phases of a request (timeouts.ts). */
  headersTimeoutMs: number;
  bodyIdleTimeoutMs: number;
  requestTimeoutMs: number;
  /** Deadline of each dependency's check on /ready. */
  readyTimeoutMs: number;
  /** Heavy requests at once per project and per key, and the wait for a turn before 429 (heavy-turns.ts). */
  heavyPerProject: number;
  heavyPerKey: number;
  heavyWaitMs: number;
}

export function requestLimitsFromConfig(config: Config): RequestLimits {
  return {
    maxJsonDepth: config.WEFT_MAX_JSON_DEPTH,
    maxStringChars: config.WEFT_MAX_STRING_CHARS,
    maxArrayItems: config.WEFT_MAX_ARRAY_ITEMS,
    maxStreamLimit: config.WEFT_MAX_STREAM_LIMIT,
    maxPageLimit: config.WEFT_MAX_PAGE_LIMIT,
    maxQueryBytes: config.WEFT_MAX_QUERY_BYTES,
    maxQueryDepth: config.WEFT_MAX_QUERY_DEPTH,
    maxValueBytes: config.WEFT_MAX_VALUE_BYTES,
    rateLimitMax: config.WEFT_RATE_LIMIT_MAX,
    rateLimitWindowMs: config.WEFT_RATE_LIMIT_WINDOW_MS,
    maxInflightBodyBytes: config.WEFT_MAX_INFLIGHT_BODY_BYTES,
    maxInflightRequests: config.WEFT_MAX_INFLIGHT_REQUESTS,
    refusedBodyDrainBytes: config.WEFT_REFUSED_BODY_DRAIN_BYTES,
    refusedBodyDrainMs: config.WEFT_REFUSED_BODY_DRAIN_MS,
    headersTimeoutMs: config.WEFT_HEADERS_TIMEOUT_MS,
    bodyIdleTimeoutMs: config.WEFT_BODY_IDLE_TIMEOUT_MS,
    requestTimeoutMs: config.WEFT_REQUEST_TIMEOUT_MS,
    readyTimeoutMs: config.WEFT_READY_TIMEOUT_MS,
    heavyPerProject: config.WEFT_HEAVY_PER_PROJECT,
    heavyPerKey: config.WEFT_HEAVY_PER_KEY,
    heavyWaitMs: config.WEFT_HEAVY_WAIT_MS,
  };
}

/** The defaults of the configuration table, for servers built without a config. */
export const defaultRequestLimits: RequestLimits = requestLimitsFromConfig(loadConfig({}));

/** Nesting depth of a JSON value (a scalar is 0). Bounded by the body parser's depth check. */
function depthOf(v: unknown): number {
  if (v === null || typeof v !== 'object') return 0;
  let max = 0;
  for (const x of Array.isArray(v) ? v : Object.values(v)) max = Math.max(max, depthOf(x));
  return max + 1;
}

/**
 * Limits that depend on what a member means, applied to every endpoint's validated body:
 * `limit` caps (streams vs pages), the size and depth of a query expression. (The feedback
 * payload's size is the feedback route's, with the reference's limit and answer.)
 */
export function enforceEndpointLimits(body: unknown, opts: { stream: boolean }, limits: RequestLimits): void {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return;
  const b = body as Record<string, unknown>;
  const cap = opts.stream ? limits.maxStreamLimit : limits.maxPageLimit;
  if (typeof b.limit === 'number' && b.limit > cap) throw badRequest(`limit: must be at most ${cap}`, 'limit');
  if (b.query !== undefined && b.query !== null) {
    const bytes = Buffer.byteLength(JSON.stringify(b.query));
    if (bytes > limits.maxQueryBytes) throw payloadTooLarge(`query: larger than ${limits.maxQueryBytes} bytes`, 'query');
    if (depthOf(b.query) > limits.maxQueryDepth) throw badRequest(`query: nested deeper than ${limits.maxQueryDepth} levels`, 'query');
  }
}
