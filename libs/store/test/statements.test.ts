import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPermanent, metricsRegistry } from '@weft/core';
import { openStore, type Store } from '../src/connection';
import { isRowRejection, isStoreError, type StoreError } from '../src/errors';

// One embedded store for this file (chDB allows one data path per process).
let store: Store;
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'weft-statements-'));
  store = openStore({ dataDir });
  await store.command('CREATE TABLE t (id String, n UInt32, at DateTime64(6)) ENGINE = MergeTree ORDER BY id');
});
afterAll(async () => {
  await store?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** What a promise was rejected with. */
const failure = (p: Promise<unknown>) =>
  p.then(
    () => expect.fail('expected a failure'),
    (e: unknown) => e,
  );

describe('store statements (rows, row, streamRows, streamRaw, command, insertRows) on chDB', () => {
  it('inserts row objects and reads them back typed, with placeholders bound', async () => {
    await store.insertRows('t', [
      { id: 'a', n: 1, at: '2026-01-01 00:00:00.000001' },
      { id: 'b', n: 2, at: '2026-01-01T00:00:01Z' },
    ]);
    await store.insertRows('t', []);
    const rows = await store.rows<{ id: string; n: number }>('SELECT id, n FROM t WHERE n >= {min:UInt32} ORDER BY id', { min: 1 });
    expect(rows).toEqual([
      { id: 'a', n: 1 },
      { id: 'b', n: 2 },
    ]);
    expect(await store.row<{ id: string }>('SELECT id FROM t WHERE id IN ({ids:Array(String)})', { ids: ['b', 'z'] })).toEqual({ id: 'b' });
    expect(await store.row('SELECT id FROM t WHERE id = {id:String}', { id: 'none' })).toBeUndefined();
  });

  it('applies per-statement settings and runs commands with parameters', async () => {
    // A setting given for one statement changes that statement's answer only.
    const [capped] = await store.rows<{ v: string }>(
      'SELECT getSetting({s:String}) AS v',
      { s: 'max_threads' },
      { settings: { max_threads: 3 } },
    );
    expect(Number(capped?.v)).toBe(3);
    await store.command('ALTER TABLE t DELETE WHERE id = {id:String}', { id: 'a' }, { settings: { mutations_sync: '1' } });
    expect(await store.rows('SELECT id FROM t ORDER BY id')).toEqual([{ id: 'b' }]);
  });

  it('names a statement in its log_comment and its duration metric', async () => {
    const row = await store.row<{ c: string }>("SELECT getSetting('log_comment') AS c", undefined, { name: 'statements.test' });
    // The name, and a number that makes the running statement's tag unique (its cancel handle).
    expect(row?.c).toMatch(/^statements\.test #\d+$/);
    const text = await metricsRegistry.getSingleMetricAsString('weft_store_statement_seconds');
    expect(text).toMatch(/weft_store_statement_seconds_count\{statement="statements.test",outcome="ok"\} 1/);
  });

  it('classifies failures: a wrong statement, refused rows (permanent), an abort', async () => {
    const wrong = await failure(store.rows('SELECT * FROM no_such_table', undefined, { name: 'statements.wrong' }));
    expect(isStoreError(wrong)).toBe(true);
    expect(wrong).toMatchObject({ kind: 'statement', type: 'UNKNOWN_TABLE', statement: 'statements.wrong' });
    expect((wrong as StoreError).message).toMatch(/no_such_table/);
    expect((wrong as StoreError).cause).toBeInstanceOf(Error);
    expect(await metricsRegistry.getSingleMetricAsString('weft_store_statement_seconds')).toMatch(
      /statement="statements.wrong",outcome="statement"\} 1/,
    );

    const refused = await failure(store.insertRows('t', [{ id: 'c', n: 'not a number', at: 'x' }]));
    expect(refused).toMatchObject({ name: 'StoreError', kind: 'rows' });
    expect(isRowRejection(refused)).toBe(true);
    expect(isPermanent(refused)).toBe(true);

    const abort = new AbortController();
    abort.abort();
    const aborted = await failure(store.rows('SELECT sleep(1)', undefined, { signal: abort.signal }));
    expect(aborted).toMatchObject({ name: 'StoreError', kind: 'aborted' });
  });

  it('streams rows as they come and stops the statement when the loop is left', async () => {
    const seen: { n: number }[] = [];
    for await (const r of store.streamRows<{ n: number }>(
      'SELECT toUInt32(number) AS n FROM numbers({count:UInt32})',
      { count: 100_000 },
      { name: 'statements.stream', settings: { max_block_size: 1000 } },
    )) {
      seen.push(r);
      if (seen.length === 2500) break;
    }
    expect(seen.at(-1)).toEqual({ n: 2499 });
    // Left early: still timed, as a statement that ended well.
    expect(await metricsRegistry.getSingleMetricAsString('weft_store_statement_seconds')).toMatch(
      /statement="statements.stream",outcome="ok"\} 1/,
    );
    const all: number[] = [];
    for await (const r of store.streamRows<{ id: string; n: number }>('SELECT id, n FROM t ORDER BY id')) all.push(r.n);
    expect(all).toEqual([2]);
  });

  it('streams an answer in a named format as the engine writes it', async () => {
    const chunks: Buffer[] = [];
    for await (const c of store.streamRaw('SELECT id, n FROM t WHERE n = {n:UInt32} ORDER BY id', { n: 2 }, { format: 'CSVWithNames' }))
      chunks.push(c);
    expect(Buffer.concat(chunks).toString('utf8')).toBe('"id","n"\n"b",2\n');
    const wrong = await failure(
      (async () => {
        for await (const c of store.streamRaw('SELECT * FROM no_such_table', undefined, { format: 'RowBinary', name: 'statements.raw' }))
          void c;
      })(),
    );
    expect(wrong).toMatchObject({ name: 'StoreError', kind: 'statement', type: 'UNKNOWN_TABLE', statement: 'statements.raw' });
    const abort = new AbortController();
    abort.abort();
    const aborted = await failure(
      (async () => {
        for await (const c of store.streamRaw('SELECT sleep(1)', undefined, { format: 'JSONEachRow', signal: abort.signal })) void c;
      })(),
    );
    expect(aborted).toMatchObject({ name: 'StoreError', kind: 'aborted' });
  });

  it('classifies an engine that cannot be reached as unavailable', async () => {
    // A server URL nothing listens on (port 1): the connection is refused.
    const down = openStore({ url: 'http://127.0.0.1:1', dataDir });
    try {
      const err = await failure(down.command('SELECT 1'));
      expect(err).toMatchObject({ name: 'StoreError', kind: 'unavailable' });
      expect(isPermanent(err)).toBe(false);
    } finally {
      await down.close();
    }
  });
});
