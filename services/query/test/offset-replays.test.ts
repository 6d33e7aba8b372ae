import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endPart, insertCallParts, migrate, openStore, startPart, wholeCallPart, type Store } from '@weft/store';
import { streamCallLines } from '../src/calls';

/**
 * An offset counts calls, not stored rows: a replayed start (the same call sent twice, two rows
 * until the engine folds them) must not shift the page. Merges are stopped here so the replays
 * stay unfolded, as they are for a while after any retried write. Small pages (4 rows): a page
 * that holds a replay is short, and the stream goes on after it.
 */
const P = 'offset/replays';
const CALLS = 60;

describe('a stream after an offset, with replays not folded yet (embedded engine)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'weft-offset-'));
  let store: Store;
  const ids: string[] = [];

  beforeAll(async () => {
    store = openStore({ dataDir: dir });
    await migrate(store);
    for (const table of ['calls_starts', 'calls_ends']) await store.client.command({ query: `SYSTEM STOP MERGES ${table}` });
    const t0 = Date.parse('2026-10-01T00:00:00Z');
    const starts = Array.from({ length: CALLS }, (_, i) => {
      const id = `c-${String(i).padStart(3, '0')}`;
      ids.push(id);
      // Ties of three start times: an offset and a page end fall inside them.
      const at = new Date(t0 + Math.floor(i / 3) * 1000).toISOString();
      return { id, at, start: startPart({ project_id: P, id, trace_id: id, op_name: 'op', started_at: at, inputs: { i } }, 'tester', 1) };
    });
    await insertCallParts(
      store,
      starts.map((s) => wholeCallPart(s.start, endPart({ project_id: P, id: s.id, ended_at: s.at, output: 'ok', summary: {} }, 1))),
    );
    // Every fourth call's start and end sent again: a second part holding the same keys.
    await insertCallParts(
      store,
      starts
        .filter((_, i) => i % 4 === 0)
        .map((s) => wholeCallPart(s.start, endPart({ project_id: P, id: s.id, ended_at: s.at, output: 'ok', summary: {} }, 1))),
    );
    const rows = await store.row<{ n: number }>(`SELECT toUInt32(count()) AS n FROM calls_starts WHERE project_id = {p:String}`, { p: P });
    expect(rows!.n).toBe(CALLS + CALLS / 4);
  }, 120_000);
  afterAll(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const page = async (sortField: string, direction: 'asc' | 'desc', offset: number, limit: number) => {
    const req = { project_id: P, sort_by: [{ field: sortField, direction }], offset, limit, columns: ['id'] };
    const chunks: Buffer[] = [];
    for await (const chunk of streamCallLines(store, req as never, new AbortController().signal, { pageRows: 4 })) chunks.push(chunk);
    return Buffer.concat(chunks)
      .toString('utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { id: string }).id);
  };

  for (const direction of ['asc', 'desc'] as const) {
    // started_at reads the start rows alone; ended_at (an end column) picks ids from joined rows.
    for (const field of ['started_at', 'ended_at']) {
      it(`skips exactly the calls before it (${field} ${direction})`, async () => {
        for (const offset of [1, 7, 20, 45, 59, 60, 70]) {
          const got = await page(field, direction, offset, 10);
          const order = field === 'started_at' ? byStart(direction) : orderByEnd(direction);
          expect(got).toEqual(order.slice(offset, offset + 10));
        }
      });
    }
  }

  /** The calls by start time: ties by id, both keys in the one direction (the plan's order). */
  function byStart(direction: 'asc' | 'desc'): string[] {
    return direction === 'asc' ? ids : [...ids].reverse();
  }

  /** The calls by end time (the same as start time here), ties by id ascending (the plan's tiebreak). */
  function orderByEnd(direction: 'asc' | 'desc'): string[] {
    const at = (id: string) => Math.floor(Number(id.slice(2)) / 3);
    return [...ids].sort((x, y) => (direction === 'asc' ? at(x) - at(y) : at(y) - at(x)) || (x < y ? -1 : 1));
  }
});
