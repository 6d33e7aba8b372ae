import { describe, expect, it } from 'vitest';
import { isPermanent, retryAfterOf } from '@weft/core';
import { toStoreError } from '../src/errors';

/** What a failed statement tells the edge: the engine unavailable is "retry later" (503), rows refused are permanent. */
describe('store failures and their markers', () => {
  it('marks the engine unreachable or not answering as unavailable', () => {
    for (const e of [
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
      Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
      new Error('socket hang up'),
      Object.assign(new Error('Timeout exceeded'), { type: 'SOCKET_TIMEOUT' }),
    ]) {
      const err = toStoreError(e, 'keys.find');
      expect([err.kind, retryAfterOf(err), isPermanent(err)]).toEqual(['unavailable', 1, false]);
    }
  });

  it('leaves rows refused and wrong statements without it', () => {
    const rows = toStoreError(Object.assign(new Error('Cannot parse input'), { type: 'CANNOT_PARSE_INPUT_ASSERTION_FAILED' }));
    expect([rows.kind, retryAfterOf(rows), isPermanent(rows)]).toEqual(['rows', undefined, true]);
    const wrong = toStoreError(Object.assign(new Error('Unknown table'), { type: 'UNKNOWN_TABLE' }));
    expect([wrong.kind, retryAfterOf(wrong)]).toEqual(['statement', undefined]);
  });
});
