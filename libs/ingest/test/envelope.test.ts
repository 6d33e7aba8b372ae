import { describe, expect, it } from 'vitest';
import { UndecodableMessageError } from '@weft/bus';
import { callPartTsvLine, decodeCallPartRowBinary, encodeCallPartsRowBinary, type CallPartRow } from '@weft/store';
import {
  callPartCodec,
  callPartFacts,
  callPartIdentity,
  callPartInsertable,
  callPartMessage,
  encodeCallPartRows,
  encodedCallPartMessages,
  enteredCallPartMessage,
  type CallPartEnvelope,
} from '@weft/ingest';

const row: CallPartRow = {
  project_id: 'p/q',
  id: 'c1',
  input_refs: [],
  output_refs: [],
  created_at: '2026-01-01 00:00:00.000000',
  op_name: 'op',
};
const withNulls = (r: CallPartRow) => ({ ...decodeCallPartRowBinary(encodeCallPartsRowBinary([{ ...r }])), ...r });

const reason = (b: Buffer | null) => {
  try {
    callPartCodec.decode(b);
    return 'decoded';
  } catch (e) {
    expect(e).toBeInstanceOf(UndecodableMessageError);
    return (e as Error).message;
  }
};
const bytesOf = (e: CallPartEnvelope) => {
  const insertable = callPartInsertable(e);
  if (!('format' in insertable)) throw new Error('a row, not bytes');
  return insertable;
};

describe('call-part envelope on the bus', () => {
  it('is written as version 4: the row in RowBinary, read back as the bytes the insert takes', () => {
    const m = callPartMessage({ ...row, id: 'c\n\n1', started_at: '2026-01-01 00:00:00.000001' });
    expect(m.key).toBe('p/q/c\n\n1');
    const bytes = callPartCodec.encode(m.value);
    expect(bytes[0]).toBe(4);
    const decoded = callPartCodec.decode(bytes);
    expect(decoded.v).toBe(4);
    const insertable = bytesOf(decoded);
    expect(insertable.format).toBe('RowBinary');
    expect(decodeCallPartRowBinary(insertable.bytes)).toEqual(withNulls(m.value.v === 1 ? m.value.row : row));
    expect(callPartIdentity(decoded)).toEqual({ project_id: 'p/q', id: 'c\n\n1', start: true, end: false });
    expect(callPartIdentity(callPartCodec.decode(callPartCodec.encode(callPartMessage(row).value)))).toEqual({
      project_id: 'p/q',
      id: 'c1',
      start: false,
      end: false,
    });
    // Re-encoding a decoded part (a dead letter replayed) gives the same bytes.
    expect(callPartCodec.encode(decoded)).toEqual(bytes);
  });

  it('carries the entrance as version 5, read back on every part with the facts delivery counts', () => {
    const rows: CallPartRow[] = [
      { ...row, id: 'a', trace_id: 't', started_at: '2026-01-01 00:00:00.000001', created_at: '2026-01-01 00:00:02.500000' },
      { ...row, id: 'b', ended_at: '2026-01-01 00:00:01.000000' },
    ];
    const encoded = encodeCallPartRows(rows);
    const joined = callPartCodec.encodeMany!(
      encodedCallPartMessages(encoded.bytes, encoded.ends, encoded.keys, 'otlp_grpc').map((m) => m.value),
    );
    expect([joined[0], joined[1]]).toEqual([5, 3]);
    const parts = callPartCodec.decodeMany!(joined);
    expect(parts.map((p) => (p.v === 4 ? p.entrance : null))).toEqual(['otlp_grpc', 'otlp_grpc']);
    expect(parts.map(callPartFacts)).toEqual([
      { project_id: 'p/q', started: true, ended: false, createdAtMicros: Date.UTC(2026, 0, 1, 0, 0, 2, 500) * 1000 },
      { project_id: 'p/q', started: false, ended: true, createdAtMicros: Date.UTC(2026, 0, 1) * 1000 },
    ]);
    // A row publish names its entrance too; the bytes are the insert's, after the two header bytes.
    const one = callPartCodec.encode(enteredCallPartMessage(rows[0]!, 'inference').value);
    expect([one[0], one[1]]).toEqual([5, 4]);
    expect(decodeCallPartRowBinary(bytesOf(callPartCodec.decode(one)).bytes)).toEqual(withNulls(rows[0]!));
    expect(reason(Buffer.of(5, 9, ...one.subarray(2)))).toMatch(/version 5\): unknown entrance 9/);
    expect(reason(one.subarray(0, one.length - 3))).toMatch(/version 5, part 1\): cut short/);
  });

  it('joins the parts of one publish in one version-4 value, read back as one envelope each', () => {
    const rows: CallPartRow[] = [
      { ...row, id: 'a', started_at: '2026-01-01 00:00:00.000001' },
      { ...row, id: 'b\nc', output_dump: 'line\nbreak', ended_at: '2026-01-01 00:00:01.000000' },
      { ...row, id: 'w', started_at: '2026-01-01 00:00:00.000001', ended_at: '2026-01-01 00:00:01.000000' },
    ];
    const joined = callPartCodec.encodeMany!(rows.map((r) => callPartMessage(r).value));
    expect(joined[0]).toBe(4);
    const parts = callPartCodec.decodeMany!(joined);
    expect(parts.map((p) => callPartIdentity(p))).toEqual([
      { project_id: 'p/q', id: 'a', start: true, end: false },
      { project_id: 'p/q', id: 'b\nc', start: false, end: true },
      { project_id: 'p/q', id: 'w', start: true, end: true },
    ]);
    expect(Buffer.concat(parts.map((p) => bytesOf(p).bytes))).toEqual(encodeCallPartsRowBinary(rows));
    // Parts already encoded (decoded from the bus) join to the same bytes, with rows too; one part reads alone.
    expect(callPartCodec.encodeMany!(parts)).toEqual(joined);
    expect(callPartCodec.encodeMany!([parts[0]!, callPartMessage(rows[1]!).value, parts[2]!])).toEqual(joined);
    expect(callPartCodec.decodeMany!(callPartCodec.encode(parts[0]!))).toEqual([parts[0]]);
    expect(() => callPartCodec.decode(joined)).toThrow(/decodeMany/);
    const bad = (body: Buffer) => () => callPartCodec.decodeMany!(Buffer.concat([Buffer.of(4), body]));
    expect(bad(Buffer.alloc(0))).toThrow(/version 4\): no part/);
    expect(bad(Buffer.concat([encodeCallPartsRowBinary(rows), Buffer.of(3, 0x61)]))).toThrow(/version 4, part 4\): cut short/);
    expect(bad(encodeCallPartsRowBinary([{ ...row, id: '' }]))).toThrow(/version 4, part 1\): empty id/);
  });

  it('still reads versions 2 and 3 (TabSeparated lines), as gateways wrote them before version 4, for a TabSeparated insert', () => {
    const rows: CallPartRow[] = [
      { ...row, id: 'a', started_at: '2026-01-01 00:00:00.000001' },
      { ...row, id: 'b\tc', output_dump: 'line\nbreak', ended_at: '2026-01-01 00:00:01.000000' },
    ];
    const v3 = Buffer.from('\u0003' + rows.map(callPartTsvLine).join(''), 'utf8');
    const parts = callPartCodec.decodeMany!(v3);
    expect(parts.map((p) => callPartIdentity(p))).toEqual([
      { project_id: 'p/q', id: 'a', start: true, end: false },
      { project_id: 'p/q', id: 'b\tc', start: false, end: true },
    ]);
    expect(parts.map((p) => bytesOf(p).format)).toEqual(['TabSeparated', 'TabSeparated']);
    expect(Buffer.concat(parts.map((p) => bytesOf(p).bytes)).toString('utf8')).toBe(rows.map(callPartTsvLine).join(''));
    // Re-encoded as they came (a dead letter of one part is version 2); never mixed with RowBinary in one record.
    expect(callPartCodec.encodeMany!(parts)).toEqual(v3);
    expect(callPartCodec.encode(parts[0]!)[0]).toBe(2);
    expect(callPartCodec.decode(callPartCodec.encode(parts[0]!))).toEqual(parts[0]);
    expect(() => callPartCodec.encodeMany!([parts[0]!, callPartMessage(row).value])).toThrow(/one record/);
    const bad = (text: string) => () => callPartCodec.decodeMany!(Buffer.from('\u0003' + text, 'utf8'));
    expect(bad('')).toThrow(/version 3\): no part/);
    expect(bad(callPartTsvLine(rows[0]!) + 'a\tb\n')).toThrow(/version 3, part 2\): 2 fields, not 24/);
    expect(bad(callPartTsvLine(rows[0]!).slice(0, -1))).toThrow(/version 3, part 1\): not a line/);
  });

  it('still reads version 1 (JSON), as the first gateways wrote it', () => {
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
    const v4 = encodeCallPartsRowBinary([row], Buffer.of(4));
    expect(reason(v4)).toBe('decoded');
    expect(reason(v4.subarray(0, v4.length - 2))).toMatch(/version 4, part 1\): cut short/);
    expect(reason(Buffer.concat([v4, v4.subarray(1)]))).toMatch(/version-4 value holds several parts/);
  });
});
