import { describe, expect, it } from 'vitest';
import { UndecodableMessageError } from '@weft/bus';
import { callPartTsvLine } from '@weft/harness';
import { decodeCallPartRowBinary, encodeCallPartsRowBinary, type CallPartRow } from '@weft/store';
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

/** 2026-01-01 00:00:00 UTC in µs, as rows hold times. */
const T0 = Date.UTC(2026, 0, 1) * 1000;
const row: CallPartRow = {
  project_id: 'p/q',
  id: 'c1',
  input_refs: [],
  output_refs: [],
  created_at: T0,
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
  it('is written as version 5: the row in RowBinary, read back as the bytes the insert takes', () => {
    const m = callPartMessage({ ...row, id: 'c\n\n1', started_at: T0 + 1 });
    expect(m.key).toBe('p/q/c\n\n1');
    const bytes = callPartCodec.encode(m.value);
    // No entrance named: its byte is 0 and the part reads back without one.
    expect([bytes[0], bytes[1]]).toEqual([5, 0]);
    const decoded = callPartCodec.decode(bytes);
    expect(decoded.v).toBe(4);
    expect(decoded.entrance).toBeUndefined();
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
      { ...row, id: 'a', trace_id: 't', started_at: T0 + 1, created_at: T0 + 2_500_000 },
      { ...row, id: 'b', ended_at: T0 + 1_000_000 },
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

  it('joins the parts of one publish in one version-5 value, read back as one envelope each', () => {
    const rows: CallPartRow[] = [
      { ...row, id: 'a', started_at: T0 + 1 },
      { ...row, id: 'b\nc', output_dump: 'line\nbreak', ended_at: T0 + 1_000_000 },
      { ...row, id: 'w', started_at: T0 + 1, ended_at: T0 + 1_000_000 },
    ];
    const joined = callPartCodec.encodeMany!(rows.map((r) => callPartMessage(r).value));
    expect(joined[0]).toBe(5);
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
    const bad = (body: Buffer) => () => callPartCodec.decodeMany!(Buffer.concat([Buffer.of(5, 0), body]));
    expect(bad(Buffer.alloc(0))).toThrow(/version 5\): no part/);
    expect(bad(Buffer.concat([encodeCallPartsRowBinary(rows), Buffer.of(3, 0x61)]))).toThrow(/version 5, part 4\): cut short/);
    expect(bad(encodeCallPartsRowBinary([{ ...row, id: '' }]))).toThrow(/version 5, part 1\): empty id/);
    expect(() => callPartCodec.decodeMany!(Buffer.of(5))).toThrow(/version 5\): unknown entrance \(none\)/);
  });

  it('does not read the pre-1.0 versions 1 to 4: each is dead-lettered with a reason naming its version', () => {
    const v1 = Buffer.from(JSON.stringify({ v: 1, kind: 'call_part', row }));
    const line = callPartTsvLine(row);
    const v4 = encodeCallPartsRowBinary([row], Buffer.of(4));
    const unread = (version: number) => new RegExp(`envelope version ${version} is not read \\(written before 1\\.0`);
    expect(reason(v1)).toMatch(unread(1));
    expect(reason(Buffer.from('\u0002' + line, 'utf8'))).toMatch(unread(2));
    expect(reason(Buffer.from('\u0003' + line + line, 'utf8'))).toMatch(unread(3));
    expect(reason(v4)).toMatch(unread(4));
    // The same rows as version 5 are read.
    expect(reason(Buffer.concat([Buffer.of(5, 1), v4.subarray(1)]))).toBe('decoded');
  });

  it('names what is wrong with an undecodable value', () => {
    expect(reason(null)).toMatch(/empty/);
    expect(reason(Buffer.from('this is not json'))).toMatch(/invalid envelope: a first byte of 0x74 is no envelope version/);
    const v5 = encodeCallPartsRowBinary([row], Buffer.of(5, 1));
    expect(reason(v5)).toBe('decoded');
    expect(reason(v5.subarray(0, v5.length - 2))).toMatch(/version 5, part 1\): cut short/);
    expect(reason(Buffer.concat([v5, v5.subarray(2)]))).toMatch(/version-5 value holds several parts/);
  });
});
