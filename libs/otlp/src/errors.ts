/**
 * The converter's only failures. A SpanConversionError rejects one span (counted in
 * partial_success, the rest of the request goes on); an OtlpRequestError rejects the whole
 * request (the gateway answers 400 naming the field).
 */
export class SpanConversionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SpanConversionError';
  }
}

/** A key is both a value and a prefix of another key (`a=1` and `a.b=2`): the reference rejects the span. */
export class AttributePathConflictError extends SpanConversionError {
  constructor(readonly path: string) {
    super(`attribute path conflict at '${path}': a key is both a value and a prefix of another key`);
    this.name = 'AttributePathConflictError';
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
