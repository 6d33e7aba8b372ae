/**
 * ClickHouse error kinds that mean "these rows are wrong", not "the server is unwell": retrying
 * the same rows cannot succeed, so the writer dead-letters them instead of retrying forever.
 */
const ROW_REJECTION =
  /CANNOT_PARSE|CANNOT_READ|INCORRECT_DATA|TYPE_MISMATCH|CANNOT_CONVERT|VALUE_IS_OUT_OF_RANGE|TOO_LARGE_STRING_SIZE|ILLEGAL_TYPE_OF_ARGUMENT|CANNOT_INSERT_NULL|ATTEMPT_TO_READ_AFTER_EOF|UNKNOWN_IDENTIFIER|NO_SUCH_COLUMN|DECIMAL_OVERFLOW/;
const ROW_REJECTION_TEXT = /Cannot parse|Cannot read|Type mismatch|Cannot convert|value is out of range/i;

/** Rows refused before they reach the engine (one it could not be given), like one it refused. */
export class RowRejectedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RowRejectedError';
  }
}

export function isRowRejection(e: unknown): boolean {
  if (e instanceof RowRejectedError) return true;
  if (!(e instanceof Error)) return false;
  const type = (e as { type?: unknown }).type;
  if (typeof type === 'string' && ROW_REJECTION.test(type)) return true;
  return ROW_REJECTION_TEXT.test(e.message);
}
