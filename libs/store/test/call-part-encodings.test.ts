import fc from 'fast-check';
import { clickHouseToMicros } from '@weft/core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CALL_PART_COLUMNS,
  callPartRowBinaryEnd,
  decodeCallPartRowBinary,
  encodeCallPartsRowBinary,
  migrate,
  openStore,
  type CallPartRow,
  type RawRowFormat,
  type Store,
} from '../src/index';
import { encodeCallPartsTsv } from '@weft/harness';

/**
 * The encodings of call parts (RowBinary, what the services write; TabSeparated, what older
 * versions put on the bus), checked against the real engine: whatever the strings hold (quotes,
 * backslashes, tabs, newlines, NUL, `\N`, any Unicode, texts long enough for a 3-byte length),
 * a row read back equals the row encoded.
 */
describe('call parts as RowBinary and TabSeparated', () => {
  let dir: string;
  let store: Store;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'weft-tsv-'));
    store = openStore({ dataDir: dir });
    await migrate(store.client);
    // call_parts keeps nothing (Null engine): an echo table with its columns keeps what arrives.
    await store.client.command({ query: 'CREATE TABLE call_parts_echo AS call_parts ENGINE = MergeTree ORDER BY id' });
  }, 120_000);
  afterAll(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const text = fc.oneof(
    fc.string({ unit: 'binary' }),
    fc.constantFrom(
      '\\N',
      '\\',
      "'",
      '\t',
      '\n',
      '\r',
      '\0',
      '\\t',
      "\\'",
      '"',
      '[]',
      "['a']",
      'weave:///e/p/obj/x:1',
      '\n\n',
      'é'.repeat(9000),
      'x'.repeat(20_000),
    ),
  );
  const nullableText = fc.option(text, { nil: null });
  // Times as rows hold them: µs since the epoch.
  const time = fc.integer({ min: 0, max: 4_102_444_799_999_999 });
  const row: fc.Arbitrary<CallPartRow> = fc.record({
    project_id: text,
    id: fc.uuid(),
    trace_id: nullableText,
    parent_id: nullableText,
    thread_id: nullableText,
    turn_id: nullableText,
    op_name: nullableText,
    display_name: nullableText,
    started_at: fc.option(time, { nil: null }),
    ended_at: fc.option(time, { nil: null }),
    attributes_dump: nullableText,
    inputs_dump: fc.option(
      fc.jsonValue().map((v) => JSON.stringify(v)),
      { nil: null },
    ),
    input_refs: fc.array(text, { maxLength: 3 }),
    output_dump: nullableText,
    output_refs: fc.array(text, { maxLength: 3 }),
    summary_dump: nullableText,
    exception: nullableText,
    otel_dump: nullableText,
    svc_user_id: nullableText,
    svc_run_id: nullableText,
    svc_run_step: fc.option(fc.nat(), { nil: null }),
    svc_run_step_end: fc.option(fc.nat(), { nil: null }),
    deleted_at: fc.constant(null),
    created_at: time,
  });

  const readBack = async (format: RawRowFormat, bytes: Buffer) => {
    await store.client.command({ query: 'TRUNCATE TABLE call_parts_echo' });
    await store.insertRaw('call_parts_echo', CALL_PART_COLUMNS, format, bytes);
    const rs = await store.client.query({ query: `SELECT ${CALL_PART_COLUMNS.join(', ')} FROM call_parts_echo`, format: 'JSONEachRow' });
    // The engine prints times as text: read back as µs, as rows hold them.
    const asMicros = (t: unknown) => (typeof t === 'string' ? clickHouseToMicros(t) : t);
    return new Map(
      (await rs.json<Record<string, unknown>>()).map((r) => {
        for (const c of ['started_at', 'ended_at', 'deleted_at', 'created_at']) r[c] = asMicros(r[c]);
        return [r.id as string, r as CallPartRow];
      }),
    );
  };
  const withNulls = (r: CallPartRow): CallPartRow => Object.fromEntries(CALL_PART_COLUMNS.map((c) => [c, r[c] ?? null])) as CallPartRow;
  const rowsArb = fc.uniqueArray(row, { minLength: 1, maxLength: 20, selector: (r) => r.id });

  for (const [format, encode] of [
    ['RowBinary', (rows: CallPartRow[]) => encodeCallPartsRowBinary(rows)],
    ['TabSeparated', encodeCallPartsTsv],
  ] as const) {
    it(`reads back every row exactly as encoded (${format})`, async () => {
      await fc.assert(
        fc.asyncProperty(rowsArb, async (rows) => {
          const got = await readBack(format, encode(rows));
          expect(got.size).toBe(rows.length);
          for (const r of rows) expect(got.get(r.id)).toEqual(r);
        }),
        { numRuns: 40 },
      );
    }, 120_000);
  }

  it('splits a RowBinary body back into its rows, each decoding to the row encoded', () => {
    fc.assert(
      // The bus refuses a part without a project (the engine takes one).
      fc.property(
        rowsArb.filter((rows) => rows.every((r) => r.project_id !== '')),
        (rows) => {
          const body = encodeCallPartsRowBinary(rows, Buffer.of(0xff));
          expect(body[0]).toBe(0xff);
          let at = 1;
          for (const r of rows) {
            const end = callPartRowBinaryEnd(body, at);
            if (typeof end === 'string') throw new Error(end);
            expect(decodeCallPartRowBinary(body.subarray(at, end))).toEqual(withNulls(r));
            at = end;
          }
          expect(at).toBe(body.length);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('names what is wrong with bytes that are not a RowBinary row', () => {
    const [r] = [{ project_id: 'p', id: 'c', input_refs: [], output_refs: [], created_at: Date.UTC(2026, 0, 1) * 1000 }] as CallPartRow[];
    const body = encodeCallPartsRowBinary([r!]);
    expect(callPartRowBinaryEnd(body, 0)).toBe(body.length);
    expect(callPartRowBinaryEnd(body.subarray(0, body.length - 1), 0)).toBe('cut short');
    expect(callPartRowBinaryEnd(encodeCallPartsRowBinary([{ ...r!, id: '' }]), 0)).toBe('empty id');
    expect(callPartRowBinaryEnd(encodeCallPartsRowBinary([{ ...r!, project_id: '' }]), 0)).toBe('empty project_id');
    const flag = Buffer.from(body);
    flag[4] = 7; // trace_id's null flag
    expect(callPartRowBinaryEnd(flag, 0)).toBe('a null flag of 7');
    expect(() => encodeCallPartsRowBinary([{ ...r!, created_at: 1.5 }])).toThrow(/created_at: not a time in µs/);
  });

  it('inserts a body of many megabytes in one RowBinary insert', async () => {
    const big: CallPartRow[] = Array.from({ length: 3000 }, (_, i) => ({
      project_id: 'p/big',
      id: `c${i}`,
      input_refs: [],
      output_refs: [],
      inputs_dump: JSON.stringify({ text: `ü${'x'.repeat(2000)}${i}` }),
      started_at: Date.UTC(2026, 0, 1) * 1000 + 1,
      created_at: Date.UTC(2026, 0, 1) * 1000 + 2,
    }));
    // A blank line in the body (a text's, a time's bytes: 0x0a0a…) ends data given after a statement: not here.
    big[1] = { ...big[1]!, exception: 'a\n\nb', started_at: 0x0a0a0a0a0a0a };
    const bytes = encodeCallPartsRowBinary(big);
    expect(bytes.length).toBeGreaterThan(6_000_000);
    const got = await readBack('RowBinary', bytes);
    expect(got.size).toBe(3000);
    expect(got.get('c1')).toEqual(withNulls(big[1]!));
    expect(got.get('c2999')).toEqual(withNulls(big[2999]!));
  }, 60_000);
});
