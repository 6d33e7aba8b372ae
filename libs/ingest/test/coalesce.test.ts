import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CALL_PART_COLUMNS, insertCallParts, migrate, openStore, type CallPartRow, type Store } from '@weft/store';
import { coalesceCallParts } from '@weft/ingest';

/** Times as rows hold them: µs since the epoch (2026-01-01 00:00:00 UTC and after). */
const at = Date.UTC(2026, 0, 1) * 1000;
const start = (id: string, n = 1, project = 'p/q'): CallPartRow => ({
  project_id: project,
  id,
  trace_id: `t-${id}`,
  op_name: `op-${n}`,
  started_at: at + n * 1_000_000,
  inputs_dump: `{"n":${n}}`,
  input_refs: n % 2 ? [] : [`weave:///e/p/object/in${n}:d`],
  output_refs: [],
  created_at: at,
});
const end = (id: string, n = 1, project = 'p/q'): CallPartRow => ({
  project_id: project,
  id,
  ended_at: at + (60 + n) * 1_000_000,
  output_dump: `{"out":${n}}`,
  output_refs: n % 2 ? [] : [`weave:///e/p/object/out${n}:d`],
  summary_dump: `{"k":${n}}`,
  exception: n === 3 ? 'boom' : null,
  svc_run_step_end: n,
  input_refs: [],
  created_at: at,
});
const rename = (id: string): CallPartRow => ({
  project_id: 'p/q',
  id,
  display_name: 'renamed',
  input_refs: [],
  output_refs: [],
  created_at: at,
});
const del = (id: string): CallPartRow => ({
  project_id: 'p/q',
  id,
  deleted_at: at + 120_000_000,
  input_refs: [],
  output_refs: [],
  created_at: at,
});
/** What each output part is: s (start), e (end), w (whole), r (rename), d (delete), with its call and variant. */
const shape = (rows: CallPartRow[]) =>
  rows.map((r) => {
    const kind = r.started_at && r.ended_at ? 'w' : r.started_at ? 's' : r.ended_at ? 'e' : r.deleted_at ? 'd' : 'r';
    return kind + r.id + (r.started_at ? r.op_name!.slice(3) : '') + (r.ended_at ? r.svc_run_step_end : '');
  });

describe('one part per finished call', () => {
  it('folds an end into the start before it in the same publish, in the start’s place', () => {
    expect(shape(coalesceCallParts([start('a'), start('b'), end('b', 2), rename('c'), end('a')]))).toEqual(['wa11', 'wb12', 'rc']);
    const [whole] = coalesceCallParts([start('a', 2), end('a', 3)]);
    expect(whole).toMatchObject({ ...start('a', 2), ...end('a', 3), input_refs: start('a', 2).input_refs });
    // Every column of a part is carried (a column added to the row must be added to the whole part too).
    expect(Object.keys(whole!).sort()).toEqual([...CALL_PART_COLUMNS].sort());
  });

  it('leaves an end alone when its start is not before it, already has its end, or a whole part of that call came between', () => {
    expect(shape(coalesceCallParts([end('a'), start('a', 2)]))).toEqual(['ea1', 'sa2']);
    expect(shape(coalesceCallParts([start('a'), end('a', 1), end('a', 2)]))).toEqual(['wa11', 'ea2']);
    const whole = coalesceCallParts([start('a', 2), end('a', 2)])[0]!;
    expect(shape(coalesceCallParts([start('a'), whole, end('a', 3)]))).toEqual(['sa1', 'wa22', 'ea3']);
    // The same id in another project is another call.
    expect(shape(coalesceCallParts([start('a', 1, 'p/x'), end('a', 1, 'p/q')]))).toEqual(['sa1', 'ea1']);
    const sameIdTwoProjects = coalesceCallParts([start('a', 1, 'p/x'), start('a', 2), end('a', 3, 'p/x'), end('a', 2)]);
    expect(shape(sameIdTwoProjects)).toEqual(['sa1', 'wa22', 'ea3']);
    expect(sameIdTwoProjects.map((r) => r.project_id)).toEqual(['p/x', 'p/q', 'p/x']);
    // An end joins the latest start of its call; renames and deletes do not stand between.
    expect(shape(coalesceCallParts([start('a', 1), start('a', 2), del('a'), rename('a'), end('a', 3)]))).toEqual([
      'sa1',
      'wa23',
      'da',
      'ra',
    ]);
  });

  describe('in the engine', () => {
    let dir: string;
    let store: Store;
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'weft-coalesce-'));
      store = openStore({ dataDir: dir });
      await migrate(store.client);
    }, 120_000);
    afterAll(async () => {
      await store?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    const tables = ['calls_starts', 'calls_ends', 'calls_renames', 'calls_deleted'];
    // The rows of every project under `prefix`, each named by what follows the prefix.
    const stored = async (prefix: string) => {
      const out: Record<string, unknown[]> = {};
      for (const t of tables) {
        const rs = await store.client.query({
          query: `SELECT substring(project_id, length({p:String}) + 1) AS project, * EXCEPT project_id FROM ${t} FINAL
            WHERE startsWith(project_id, {p:String}) ORDER BY tuple(*)`,
          query_params: { p: prefix },
          format: 'JSONEachRow',
        });
        out[t] = await rs.json();
      }
      return out;
    };

    it('stores exactly the rows the separate parts store, whatever the sequence of parts', async () => {
      // (kind, call id, variant, project): the same ids in two projects too.
      const part = fc.tuple(
        fc.constantFrom('s', 'e', 'r', 'd'),
        fc.constantFrom('a', 'b', 'c'),
        fc.integer({ min: 1, max: 3 }),
        fc.constantFrom('x', 'y'),
      );
      let batch = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(part, { minLength: 1, maxLength: 12 }), async (parts) => {
          batch++;
          const rows = (prefix: string) =>
            parts.map(([k, id, n, project]) => {
              const r = k === 's' ? start(id, n) : k === 'e' ? end(id, n) : k === 'r' ? rename(id) : del(id);
              return { ...r, project_id: prefix + project };
            });
          const [separate, coalesced] = [`sep/${batch}/`, `one/${batch}/`];
          await insertCallParts(store, rows(separate));
          await insertCallParts(store, coalesceCallParts(rows(coalesced)));
          const [a, b] = [await stored(separate), await stored(coalesced)];
          expect(b).toEqual(a);
          const distinct = (kind: string, key: (p: (typeof parts)[number]) => string) =>
            new Set(parts.filter(([k]) => k === kind).map(key)).size;
          expect(a.calls_starts!.length + a.calls_ends!.length).toBe(
            distinct('s', ([, id, n, pr]) => pr + id + n) + distinct('e', ([, id, , pr]) => pr + id),
          );
        }),
        { numRuns: 40 },
      );
    }, 120_000);
  });
});
