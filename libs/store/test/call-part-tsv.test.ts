import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CALL_PART_COLUMNS, encodeCallPartsTsv, migrate, openStore, type CallPartRow, type Store } from '../src/index';

/**
 * The TabSeparated encoding of call parts, checked against the real engine: whatever the
 * strings hold (quotes, backslashes, tabs, newlines, NUL, `\N`, any Unicode), a row read back
 * equals the row encoded.
 */
describe('call parts as TabSeparated', () => {
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
    fc.constantFrom('\\N', '\\', "'", '\t', '\n', '\r', '\0', '\\t', "\\'", '"', '[]', "['a']", 'weave:///e/p/obj/x:1'),
  );
  const nullableText = fc.option(text, { nil: null });
  const time = fc.integer({ min: 0, max: 4_102_444_799_999_999 }).map((us) => {
    const d = new Date(Math.floor(us / 1000));
    return `${d.toISOString().slice(0, 19).replace('T', ' ')}.${String(us % 1_000_000).padStart(6, '0')}`;
  });
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

  it('reads back every row exactly as encoded', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(row, { minLength: 1, maxLength: 20, selector: (r) => r.id }), async (rows) => {
        await store.client.command({ query: 'TRUNCATE TABLE call_parts_echo' });
        await store.insertRaw('call_parts_echo', CALL_PART_COLUMNS, 'TabSeparated', encodeCallPartsTsv(rows));
        const rs = await store.client.query({
          query: `SELECT ${CALL_PART_COLUMNS.join(', ')} FROM call_parts_echo`,
          format: 'JSONEachRow',
        });
        const got = await rs.json<CallPartRow>();
        const byId = new Map(got.map((r) => [r.id, r]));
        expect(got.length).toBe(rows.length);
        for (const r of rows) expect(byId.get(r.id)).toEqual(r);
      }),
      { numRuns: 60 },
    );
  }, 120_000);
});
