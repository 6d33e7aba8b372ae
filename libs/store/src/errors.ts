import { markPermanent, markUnavailable } from '@weft/core';

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

/**
 * What a failed statement means to its caller:
 *   rows        — the engine refused these rows (retrying them cannot succeed; marked permanent);
 *   unavailable — the engine is down, overloaded or timed out (the same statement may succeed later);
 *   aborted     — the caller's signal stopped it;
 *   statement   — anything else: the statement itself is wrong (a bug on our side).
 */
export type StoreFailureKind = 'rows' | 'unavailable' | 'aborted' | 'statement';

const UNAVAILABLE =
  /TIMEOUT_EXCEEDED|TOO_MANY_SIMULTANEOUS_QUERIES|MEMORY_LIMIT_EXCEEDED|NETWORK_ERROR|SOCKET_TIMEOUT|ALL_CONNECTION_TRIES_FAILED|TABLE_IS_READ_ONLY|NOT_ENOUGH_SPACE|KEEPER_EXCEPTION/;
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
const UNAVAILABLE_TEXT = /socket hang up|Timeout error|connect ECONNREFUSED/i;

/** A statement the store ran failed: `kind` says what retrying can do; the engine's `type`/`code` stay. */
export class StoreError extends Error {
  readonly kind: StoreFailureKind;
  /** The engine's error name (e.g. `UNKNOWN_TABLE`), when it answered with one. */
  readonly type?: string;
  /** The engine's numeric error code, or the socket's (`ECONNREFUSED`). */
  readonly code?: string;
  /** The caller's name for the statement (`keys.find`), when it gave one. */
  readonly statement?: string;

  constructor(message: string, kind: StoreFailureKind, opts: { cause?: unknown; type?: string; code?: string; statement?: string } = {}) {
    super(message, opts.cause !== undefined ? { cause: opts.cause } : undefined);
    this.name = 'StoreError';
    this.kind = kind;
    this.type = opts.type;
    this.code = opts.code;
    this.statement = opts.statement;
  }
}

export function isStoreError(e: unknown): e is StoreError {
  return e instanceof StoreError;
}

/** The kind of a client or engine failure (see StoreFailureKind). */
export function storeFailureKind(e: unknown, signal?: AbortSignal): StoreFailureKind {
  if (e instanceof StoreError) return e.kind;
  if (signal?.aborted || (e instanceof Error && e.name === 'AbortError')) return 'aborted';
  if (isRowRejection(e)) return 'rows';
  if (!(e instanceof Error)) return 'statement';
  const { type, code } = e as { type?: unknown; code?: unknown };
  if (typeof type === 'string' && UNAVAILABLE.test(type)) return 'unavailable';
  if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return 'unavailable';
  if (UNAVAILABLE_TEXT.test(e.message)) return 'unavailable';
  return 'statement';
}

/**
 * The StoreError for anything a statement threw (the same message, the original as `cause`);
 * rows the engine refused are marked permanent, as the writer's stage expects.
 */
export function toStoreError(e: unknown, statement?: string, signal?: AbortSignal): StoreError {
  if (e instanceof StoreError) return e;
  const kind = storeFailureKind(e, signal);
  const { type, code } = (typeof e === 'object' && e !== null ? e : {}) as { type?: unknown; code?: unknown };
  const message = e instanceof Error ? e.message : String(e);
  const err = new StoreError(message, kind, {
    cause: e,
    type: typeof type === 'string' ? type : undefined,
    code: typeof code === 'string' || typeof code === 'number' ? String(code) : undefined,
    statement,
  });
  // Rows refused: dead-lettered by the writer. The engine unavailable: a request answers 503.
  return kind === 'rows' ? markPermanent(err) : kind === 'unavailable' ? markUnavailable(err) : err;
}
