/**
 * Markers that say what retrying can do about a failure, so a stage decides without knowing
 * who failed (the OpenTelemetry Collector's consumererror.NewPermanent, as a value here):
 *   permanent  — the data itself is refused (retrying the same data cannot succeed): dead-letter it;
 *   retryable  — something is unavailable for now (overloaded, down, timed out): 503 + Retry-After upstream.
 */
const PERMANENT = Symbol.for('weft.failure.permanent');

/** Marks `e` permanent (the same object, so its type and message stay) and returns it. */
export function markPermanent<E>(e: E): E {
  if (typeof e === 'object' && e !== null) Object.defineProperty(e, PERMANENT, { value: true });
  return e;
}

export function isPermanent(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[PERMANENT] === true;
}

/** Unavailable for now; nothing was done. The HTTP edge answers 503 with `Retry-After`. */
export class RetryableError extends Error {
  constructor(
    message: string,
    readonly retryAfterSeconds = 1,
  ) {
    super(message);
    this.name = 'RetryableError';
  }
}

export function isRetryable(e: unknown): e is RetryableError {
  return e instanceof RetryableError;
}

const UNAVAILABLE = Symbol.for('weft.failure.unavailable');

/**
 * Marks `e` (the same object, its type and message kept) as a failure of something unavailable for
 * now — the store down, overloaded or not answering — so the HTTP edge answers 503 with
 * `Retry-After` where the error's own type means nothing to it.
 */
export function markUnavailable<E>(e: E, retryAfterSeconds = 1): E {
  if (typeof e === 'object' && e !== null) Object.defineProperty(e, UNAVAILABLE, { value: retryAfterSeconds });
  return e;
}

/** The seconds to wait before retrying, for a RetryableError or a failure marked unavailable; else undefined. */
export function retryAfterOf(e: unknown): number | undefined {
  if (e instanceof RetryableError) return e.retryAfterSeconds;
  const after = typeof e === 'object' && e !== null ? (e as Record<symbol, unknown>)[UNAVAILABLE] : undefined;
  return typeof after === 'number' ? after : undefined;
}

/**
 * A statement went past a cap of its lane (time, memory, rows read): the same request will fail
 * again, a narrower one (a shorter time range, a filter) will not. The HTTP edge answers 422.
 */
export class LimitExceededError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LimitExceededError';
  }
}

export function isLimitExceeded(e: unknown): e is LimitExceededError {
  return e instanceof LimitExceededError;
}
