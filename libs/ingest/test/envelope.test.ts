import { describe, expect, it } from 'vitest';
import { UndecodableMessageError } from '@weft/bus';
import { callPartCodec, callPartMessage } from '@weft/ingest';

const row = { project_id: 'p/q', id: 'c1', input_refs: [], output_refs: [], created_at: '2026-01-01 00:00:00.000000', op_name: 'op' };

describe('call-part envelope on Kafka', () => {
  it('round-trips an envelope and keys it by project and call id', () => {
    const m = callPartMessage(row);
    expect(m.key).toBe('p/q/c1');
    expect(callPartCodec.decode(callPartCodec.encode(m.value))).toEqual(m.value);
  });

  it('names what is wrong with an undecodable value', () => {
    const reason = (b: Buffer | null) => {
      try {
        callPartCodec.decode(b);
        return 'decoded';
      } catch (e) {
        expect(e).toBeInstanceOf(UndecodableMessageError);
        return (e as Error).message;
      }
    };
    expect(reason(null)).toMatch(/empty/);
    expect(reason(Buffer.from('{'))).toMatch(/not JSON/);
    expect(reason(Buffer.from(JSON.stringify({ v: 2, kind: 'call_part', row })))).toMatch(/at v/);
    expect(reason(Buffer.from(JSON.stringify({ v: 1, kind: 'call_part', row: { ...row, id: '' } })))).toMatch(/at row\.id/);
  });
});
