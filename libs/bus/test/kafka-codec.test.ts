import { describe, expect, it } from 'vitest';
import { callPartCodec, callPartMessage, GroupCommit, UndecodableMessageError } from '@weft/bus';

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

describe('GroupCommit', () => {
  it('joins concurrent adds into one handle call, flushes by size, and fails each add with its batch', async () => {
    const calls: number[][] = [];
    const gate = new GroupCommit<number>({
      maxItems: 4,
      lingerMs: 20,
      handle: async (items) => {
        calls.push(items);
        if (items.includes(13)) throw new Error('rejected');
      },
    });
    await Promise.all([gate.add([1]), gate.add([2, 3])]);
    expect(calls).toEqual([[1, 2, 3]]);
    await Promise.all([gate.add([4, 5]), gate.add([6, 7]), gate.add([8])]);
    expect(calls.slice(1)).toEqual([[4, 5, 6, 7], [8]]);
    const results = await Promise.allSettled([gate.add([13]), gate.add([14])]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(calls.at(-1)).toEqual([13, 14]);
  });
});
