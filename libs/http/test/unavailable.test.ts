import { describe, expect, it } from 'vitest';
import { markPermanent, markUnavailable, RetryableError } from '@weft/core';
import { toApiError } from '../src/errors';

/**
 * Something weft depends on not answering (the store's socket refused or reset, a timeout) is
 * "retry later", not a bug: 503 with Retry-After, and a reason that does not carry the failure's
 * own text (an address, an engine message), which stays in the log.
 */
describe('a failure marked unavailable at the HTTP edge', () => {
  it('answers 503 with Retry-After and a reason of its own', () => {
    const api = toApiError(markUnavailable(Object.assign(new Error('connect ECONNREFUSED 10.1.2.3:8123'), { code: 'ECONNREFUSED' }), 2));
    expect(api.status).toBe(503);
    expect(api.headers).toEqual({ 'Retry-After': '2' });
    expect(api.reason).toContain('retry');
    expect(api.reason).not.toContain('10.1.2.3');
  });

  it('keeps a RetryableError’s own reason, and other failures as they were', () => {
    const retry = toApiError(new RetryableError('ingest queue full; not stored', 3));
    expect([retry.status, retry.reason, retry.headers]).toEqual([503, 'ingest queue full; not stored', { 'Retry-After': '3' }]);
    expect(toApiError(new Error('a bug')).status).toBe(500);
    expect(toApiError(markPermanent(new Error('bad rows'))).status).toBe(500);
  });
});
