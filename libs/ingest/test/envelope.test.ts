import { describe, expect, it } from 'vitest';
import { UndecodableMessageError } from '@weft/bus';
import { callPartTsvLine } from '@weft/store';
import { callPartCodec, callPartIdentity, callPartInsertable, callPartMessage } from '@weft/ingest';

const row = { project_id: 'p/q', id: 'c1', input_refs: [], output_refs: [], created_at: '2026-01-01 00:00:00.000000', op_name: 'op' };

const reason = (b: Buffer | null) => {
  try {
    callPartCodec.decode(b);
    return 'decoded';
  } catch (e) {
    expect(e).toBeInstanceOf(UndecodableMessageError);
    return (e as Error).message;
  }
};

describe('call-part envelope on Kafka', () => {
  it('is written as version 2: the row its TabSeparated line, read back as the bytes the insert takes', () => {
    const m = callPartMessage({ ...row, id: 'c\t1', started_at: '2026-01-01 00:00:00.000001' });
    expect(m.key).toBe('p/q/c\t1');
    const bytes = callPartCodec.encode(m.value);
    expect(bytes[0]).toBe(2);
    const decoded = callPartCodec.decode(bytes);
    expect(decoded.v).toBe(2);
    expect(Buffer.from(callPartInsertable(decoded) as Uint8Array).toString('utf8')).toBe(
      callPartTsvLine(m.value.v === 1 ? m.value.row : row),
    );
    expect(callPartIdentity(decoded)).toEqual({ project_id: 'p/q', id: 'c\t1', start: true, end: false });
    expect(callPartIdentity(callPartCodec.decode(callPartCodec.encode(callPartMessage(row).value)))).toEqual({
      project_id: 'p/q',
      id: 'c1',
      start: false,
      end: false,
    });
    // Re-encoding a decoded line (a dead letter replayed) gives the same bytes.
    expect(callPartCodec.encode(decoded)).toEqual(bytes);
  });

  it('joins the parts of one publish as version 3, read back as the same lines, one envelope each', () => {
    const rows = [
      { ...row, id: 'a', started_at: '2026-01-01 00:00:00.000001' },
      { ...row, id: 'b\nc', output_dump: 'line\nbreak', ended_at: '2026-01-01 00:00:01.000000' },
      { ...row, id: 'w', started_at: '2026-01-01 00:00:00.000001', ended_at: '2026-01-01 00:00:01.000000' },
    ];
    const joined = callPartCodec.encodeMany!(rows.map((r) => callPartMessage(r).value));
    expect(joined[0]).toBe(3);
    const parts = callPartCodec.decodeMany!(joined);
    expect(parts.map((p) => callPartIdentity(p))).toEqual([
      { project_id: 'p/q', id: 'a', start: true, end: false },
      { project_id: 'p/q', id: 'b\nc', start: false, end: true },
      { project_id: 'p/q', id: 'w', start: true, end: true },
    ]);
    expect(Buffer.concat(parts.map((p) => callPartInsertable(p) as Uint8Array)).toString('utf8')).toBe(rows.map(callPartTsvLine).join(''));
    // Lines already encoded (decoded from Kafka) join to the same bytes; one part reads as version 2 too.
    expect(callPartCodec.encodeMany!(parts)).toEqual(joined);
    expect(callPartCodec.decodeMany!(callPartCodec.encode(parts[0]!))).toEqual([parts[0]]);
    expect(() => callPartCodec.decode(joined)).toThrow(/decodeMany/);
    const bad = (text: string) => () => callPartCodec.decodeMany!(Buffer.from('\u0003' + text, 'utf8'));
    expect(bad('')).toThrow(/version 3\): no part/);
    expect(bad(callPartTsvLine(rows[0]!) + 'a\tb\n')).toThrow(/version 3, part 2\): 2 fields, not 24/);
    expect(bad(callPartTsvLine(rows[0]!).slice(0, -1))).toThrow(/version 3, part 1\): not a line/);
  });

  it('still reads version 1 (JSON), as older gateways wrote it', () => {
    const v1 = { v: 1, kind: 'call_part', row };
    expect(callPartCodec.decode(Buffer.from(JSON.stringify(v1)))).toEqual(v1);
  });

  it('names what is wrong with an undecodable value', () => {
    expect(reason(null)).toMatch(/empty/);
    expect(reason(Buffer.from('{'))).toMatch(/not JSON/);
    expect(reason(Buffer.from(JSON.stringify({ v: 2, kind: 'call_part', row })))).toMatch(/at v/);
    expect(reason(Buffer.from(JSON.stringify({ v: 1, kind: 'call_part', row: { ...row, id: '' } })))).toMatch(/at row\.id/);
    const line = callPartTsvLine(row);
    const v2 = (text: string) => Buffer.from('\u0002' + text, 'utf8');
    expect(reason(v2(line))).toBe('decoded');
    expect(reason(v2(line.slice(0, -1)))).toMatch(/version 2.*no final newline/);
    expect(reason(v2(line + line))).toMatch(/more than one line/);
    expect(reason(v2('a\tb\n'))).toMatch(/2 fields, not 24/);
    expect(reason(v2(line.replace('p/q\tc1', 'p/q\t')))).toMatch(/empty id/);
    expect(reason(v2(line.replace('p/q\t', '\t')))).toMatch(/empty project_id/);
  });
});
