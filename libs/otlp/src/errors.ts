/**
 * The converter's only failures. A SpanConversionError rejects one span (counted in
 * partial_success, the rest of the request goes on); an OtlpRequestError rejects the whole
 * request (the gateway answers 400 naming the field).
 */
export class SpanConversionError extends Error {
  /** A short, bounded label for metrics: `invalid_<field>` from the message, or the one given. */
  readonly reason: string;

  constructor(message: string, reason?: string) {
    super(message);
    this.name = 'SpanConversionError';
    this.reason = reason ?? /^invalid ([a-z_]+)/.exec(message)?.[1]?.replace(/^/, 'invalid_') ?? 'invalid_span';
  }
}

export class OtlpRequestError extends Error {
  constructor(
    message: string,
    readonly field: string,
  ) {
    super(message);
    this.name = 'OtlpRequestError';
  }
}
