import { describe, expect, it } from 'vitest';
import { callEndBody, callStartBody } from '../src';
import { completedCall } from '../src/calls';

describe('a call time the store keeps', () => {
  const start = { project_id: 'e/p', op_name: 'o', inputs: {} };
  const end = { project_id: 'e/p', id: 'c', summary: {} };

  it('is any ISO 8601 date-time up to the year 2255, with or without an offset', () => {
    for (const t of ['2026-01-01T00:00:00.123456Z', '1900-01-01T00:00:00Z', '2255-01-01T00:00:00-11:53', '2026-01-01 00:00:00']) {
      expect(callStartBody.safeParse({ ...start, started_at: t }).success, t).toBe(true);
      expect(callEndBody.safeParse({ ...end, ended_at: t }).success, t).toBe(true);
    }
  });

  it('is refused past 2255 (µs no longer exact) naming the field, as a text that is no date-time is', () => {
    for (const [t, message] of [
      ['5508-05-26T20:34:05-11:53', 'must be a date-time before the year 2255'],
      ['2299-12-31T23:59:59Z', 'must be a date-time before the year 2255'],
      ['yesterday', 'must be an ISO 8601 date-time'],
    ]) {
      for (const r of [
        callStartBody.safeParse({ ...start, started_at: t }),
        callEndBody.safeParse({ ...end, ended_at: t }),
        completedCall.safeParse({ ...start, id: 'c', trace_id: 't', started_at: '2026-01-01T00:00:00Z', ended_at: t, summary: {} }),
      ]) {
        expect(r.success, t).toBe(false);
        expect(r.error!.issues.map((i) => i.message)).toEqual([message]);
        expect(r.error!.issues[0]!.path.at(-1)).toMatch(/^(started|ended)_at$/);
      }
    }
  });
});
