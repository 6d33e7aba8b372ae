import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_ROOT } from '@weft/harness';
import { migrate, openStore, type Store } from '@weft/store';
import { CALL_PART_COLUMNS, CALL_PART_TYPES, callPartRowSchema } from '../src/call-part-row';

// The row schema is the one definition of a call part; the table the migrations make must agree.
let store: Store;
let columns: { name: string; type: string; default_type: string }[];
beforeAll(async () => {
  store = openStore({ dataDir: mkdtempSync(join(TEST_ROOT, 'call-part-row-')) });
  await migrate(store.client);
  const rs = await store.client.query({ query: 'DESCRIBE TABLE call_parts', format: 'JSONEachRow' });
  columns = await rs.json();
});
afterAll(async () => {
  await store?.close();
});

describe('call_parts and its row schema', () => {
  it('has a column for every field of the row, and the row a field for every column written', () => {
    const table = new Map(columns.map((c) => [c.name, c]));
    expect(CALL_PART_COLUMNS.filter((c) => !table.has(c))).toEqual([]);
    // Columns the table computes itself (DEFAULT/MATERIALIZED/ALIAS) need no field.
    const written = columns.filter((c) => c.default_type === '').map((c) => c.name);
    expect(written.filter((c) => !(CALL_PART_COLUMNS as string[]).includes(c))).toEqual([]);
  });

  it('lets a field be absent only where the column can hold NULL or has a default', () => {
    const table = new Map(columns.map((c) => [c.name, c]));
    const wrong = CALL_PART_COLUMNS.filter((name) => {
      const c = table.get(name);
      if (!c) return false;
      const optional = callPartRowSchema.shape[name].safeParse(undefined).success;
      const acceptsAbsent = c.type.startsWith('Nullable(') || c.default_type !== '' || c.type.startsWith('Array(');
      return optional && !acceptsAbsent;
    });
    expect(wrong).toEqual([]);
  });

  it('gives every field the type the binary encoding writes, in the order of the table', () => {
    const table = new Map(columns.map((c) => [c.name, c.type]));
    expect(Object.fromEntries(CALL_PART_COLUMNS.map((c) => [c, table.get(c)]))).toEqual(CALL_PART_TYPES);
    expect(Object.keys(CALL_PART_TYPES)).toEqual(CALL_PART_COLUMNS);
  });
});
