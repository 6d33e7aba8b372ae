/**
 * Errors are values: an ApiError carries the HTTP status, a human reason and (when one
 * field is to blame) the field's dotted path. One fastify error handler (libs/http) turns
 * them into `{status, reason, field?}` JSON bodies; nothing else writes error responses.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly reason: string;
  readonly field?: string;
  /** Extra members merged into the error body (e.g. `deleted_at`, `retry_after`). */
  readonly extra?: Record<string, unknown>;
  /** Extra response headers (e.g. `Retry-After`). */
  readonly headers?: Record<string, string>;
  /**
   * The whole response body, replacing `{status, reason, ...}`: for routes whose interface
   * fixes another error shape (the OpenAI-compatible `/v1/...` routes answer `{error: {...}}`).
   */
  readonly body?: Record<string, unknown>;
  /**
   * The whole response as bytes of another media type, replacing any JSON body: OTLP's
   * protobuf `google.rpc.Status` for protobuf requests.
   */
  readonly payload?: { contentType: string; data: Uint8Array };
  /** A bounded name for why (admission's `bus_full`, …): what counts of refusals are labelled with; never sent. */
  readonly label?: string;

  constructor(
    status: number,
    reason: string,
    opts: {
      field?: string;
      extra?: Record<string, unknown>;
      headers?: Record<string, string>;
      body?: Record<string, unknown>;
      payload?: { contentType: string; data: Uint8Array };
      cause?: unknown;
      label?: string;
    } = {},
  ) {
    super(reason, opts.cause !== undefined ? { cause: opts.cause } : undefined);
    this.name = 'ApiError';
    this.status = status;
    this.reason = reason;
    this.field = opts.field;
    this.extra = opts.extra;
    this.headers = opts.headers;
    this.body = opts.body;
    this.payload = opts.payload;
    this.label = opts.label;
  }

  toBody(): Record<string, unknown> {
    if (this.body) return this.body;
    const body: Record<string, unknown> = { status: this.status, reason: this.reason };
    if (this.field !== undefined) body.field = this.field;
    if (this.extra) Object.assign(body, this.extra);
    return body;
  }
}

export const badRequest = (reason: string, field?: string) => new ApiError(400, reason, { field });
/**
 * The reference's InvalidFieldError: a field a query may not use, an object name it does not
 * take. 422, as the newest reference answers it (weave 0.52.29's server answered 403).
 */
export const invalidField = (reason: string, field?: string) => new ApiError(422, reason, { field });
/** A 401 whose challenge offers both schemes and carries the reason (RFC 6750's error_description), which clients log. */
export const unauthorized = (reason: string) =>
  new ApiError(401, reason, {
    headers: {
      'WWW-Authenticate': `Basic realm="weft", Bearer realm="weft", error_description="${headerSafe(reason).replace(/["\\]/g, "'")}"`,
    },
  });
export const forbidden = (reason: string) => new ApiError(403, reason);
export const notFound = (reason: string) => new ApiError(404, reason);
export const conflict = (reason: string) => new ApiError(409, reason);
export const payloadTooLarge = (reason: string, field?: string) => new ApiError(413, reason, { field });
export const unavailable = (reason: string, retryAfterSeconds = 1) =>
  new ApiError(503, reason, { headers: { 'Retry-After': String(retryAfterSeconds) } });

export function isApiError(e: unknown): e is ApiError {
  return e instanceof ApiError;
}

/**
 * Text fit for an HTTP header value: printable ASCII only (anything else becomes `?`), at most
 * 400 characters. Reasons name user input, which may hold any character.
 */
export function headerSafe(text: string): string {
  const ascii = text.replace(/[^\x20-\x7e]/g, '?');
  return ascii.length > 400 ? `${ascii.slice(0, 397)}...` : ascii;
}
