import { describe, expect, it } from 'vitest';
import { useWeft } from './helpers/fixture';

const P = 'acme/tables';
const EMPTY = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

const { api } = useWeft();

const query = async (body: Record<string, unknown>) => {
  const r = await api.post('/table/query', { project_id: P, ...body });
  expect(r.status, r.text).toBe(200);
  return r.body.rows as { digest: string; val: any; original_index: number }[];
};

describe('table digests and updates', () => {
  it('creates a table with the reference digests (rows hashed with sorted keys, table = sha256 hex)', async () => {
    // Computed with CPython: rows {"a":1}, {"b":[1.5,"x"]}, {"a":1} → row digests, then sha256 of their concatenation.
    const r = await api.raw('/table/create', `{"table": {"project_id": "${P}", "rows": [{"a": 1}, {"b": [1.5, "x"]}, {"a": 1}]}}`);
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual({
      digest: '36dd9a53c1d2b87c2b58ca988f076ee2c76d66f7b969521a6ecfe07ba02694f4',
      row_digests: [
        'XdhgKMbg1k4iUYb5astpM4ssWXZN95FiEH9cS7NNExA',
        'TplYJadXpFBVqzZrDviDdcmQOCZhCA4YkK9qbkarPCw',
        'XdhgKMbg1k4iUYb5astpM4ssWXZN95FiEH9cS7NNExA',
      ],
    });
    // Duplicated rows each keep their own position.
    const rows = await query({ digest: r.body.digest });
    expect(rows.map((x) => [x.original_index, x.digest])).toEqual([
      [0, 'XdhgKMbg1k4iUYb5astpM4ssWXZN95FiEH9cS7NNExA'],
      [1, 'TplYJadXpFBVqzZrDviDdcmQOCZhCA4YkK9qbkarPCw'],
      [2, 'XdhgKMbg1k4iUYb5astpM4ssWXZN95FiEH9cS7NNExA'],
    ]);
    const dup = await query({ digest: r.body.digest, filter: { row_digests: ['XdhgKMbg1k4iUYb5astpM4ssWXZN95FiEH9cS7NNExA'] } });
    expect(dup.map((x) => x.original_index)).toEqual([0, 2]);
    // Creating it again is idempotent.
    const again = await api.raw('/table/create', `{"table": {"project_id": "${P}", "rows": [{"a": 1}, {"b": [1.5, "x"]}, {"a": 1}]}}`);
    expect(again.body.digest).toBe(r.body.digest);
    expect(await query({ digest: r.body.digest })).toHaveLength(3);
  });

  it('appends to the empty table and gets the same digest as creating the rows at once', async () => {
    const up = await api.raw(
      '/table/update',
      `{"project_id": "${P}", "base_digest": "${EMPTY}", "updates": [
      {"append": {"row": {"a": 1}}}, {"append": {"row": {"b": [1.5, "x"]}}}, {"append": {"row": {"a": 1}}}]}`,
    );
    expect(up.status, up.text).toBe(200);
    expect(up.body.digest).toBe('36dd9a53c1d2b87c2b58ca988f076ee2c76d66f7b969521a6ecfe07ba02694f4');
    expect(up.body.updated_row_digests).toHaveLength(3);
  });

  it('applies insert and pop like a Python list, leaving the base table untouched', async () => {
    const base = await api.post('/table/create', { table: { project_id: P, rows: [0, 1, 2, 3, 4].map((i) => ({ i })) } });
    const up = await api.post('/table/update', {
      project_id: P,
      base_digest: base.body.digest,
      updates: [
        { insert: { index: 0, row: { i: 'first' } } },
        { pop: { index: 3 } },
        { append: { row: { i: 5 } } },
        { insert: { index: 2, row: { i: 'mid' } } },
        { pop: { index: 6 } },
      ],
    });
    expect(up.status, up.text).toBe(200);
    const rows = await query({ digest: up.body.digest });
    // [0..4] → insert first → [f,0,1,2,3,4] → pop 3 (2) → [f,0,1,3,4] → append 5 → [f,0,1,3,4,5] → insert mid at 2 → [f,0,mid,1,3,4,5] → pop 6 (5)
    expect(rows.map((r) => r.val.i)).toEqual(['first', 0, 'mid', 1, 3, 4]);
    expect(rows.map((r) => r.original_index)).toEqual([0, 1, 2, 3, 4, 5]);
    const baseRows = await query({ digest: base.body.digest });
    expect(baseRows.map((r) => r.val.i)).toEqual([0, 1, 2, 3, 4]);
    // updated_row_digests: inserted, popped, appended, inserted, popped — in update order.
    const digestOf = (i: unknown) => baseRows.find((r) => r.val.i === i)?.digest ?? rows.find((r) => r.val.i === i)?.digest;
    expect(up.body.updated_row_digests[1]).toBe(digestOf(2));
    expect(up.body.updated_row_digests[0]).toBe(digestOf('first'));
    // The same list created directly has the same digest.
    const direct = await api.post('/table/create', { table: { project_id: P, rows: ['first', 0, 'mid', 1, 3, 4].map((i) => ({ i })) } });
    expect(direct.body.digest).toBe(up.body.digest);
  });

  it('refuses bad updates with the reference errors, writing nothing', async () => {
    const base = await api.post('/table/create', { table: { project_id: P, rows: [{ i: 0 }] } });
    const pop = await api.post('/table/update', { project_id: P, base_digest: base.body.digest, updates: [{ pop: { index: 1 } }] });
    expect(pop.status).toBe(400);
    expect(pop.body.reason).toContain('Index out of range');
    expect(pop.body.field).toBe('updates[0].pop.index');
    const ins = await api.post('/table/update', {
      project_id: P,
      base_digest: base.body.digest,
      updates: [{ append: { row: { i: 1 } } }, { insert: { index: 3, row: { i: 9 } } }],
    });
    expect(ins.status).toBe(400);
    const missing = await api.post('/table/update', {
      project_id: P,
      base_digest: 'f'.repeat(64),
      updates: [{ append: { row: { i: 1 } } }],
    });
    expect(missing.status).toBe(404);
    const notDict = await api.post('/table/create', { table: { project_id: P, rows: [[1, 2]] } });
    expect(notDict.status).toBe(422);
    expect(await query({ digest: 'f'.repeat(64) })).toEqual([]);
  });
});

describe('table queries', () => {
  let digest = '';
  const N = 40;
  it('pages in insertion order with absolute original_index', async () => {
    const rows = Array.from({ length: N }, (_, i) => ({
      id: i,
      meta: { score: (i * 37) % N, label: `row-${String(i).padStart(2, '0')}` },
      ...(i % 10 === 0 ? {} : { opt: i }),
    }));
    const r = await api.post('/table/create', { table: { project_id: P, rows } });
    digest = r.body.digest;
    const page = await query({ digest, offset: 10, limit: 5 });
    expect(page.map((x) => x.val.id)).toEqual([10, 11, 12, 13, 14]);
    expect(page.map((x) => x.original_index)).toEqual([10, 11, 12, 13, 14]);
    expect(await query({ digest, offset: 38, limit: 5 })).toHaveLength(2);
    expect(await query({ digest })).toHaveLength(N);
  });

  it('sorts on a nested field (numeric, then text), asc and desc, keeping original_index', async () => {
    const asc = await query({ digest, sort_by: [{ field: 'meta.score', order: 'asc' }], limit: 5 });
    expect(asc.map((x) => x.val.meta.score)).toEqual([0, 1, 2, 3, 4]);
    for (const x of asc) expect(x.original_index).toBe(x.val.id);
    const desc = await query({ digest, sort_by: [{ field: 'meta.score', order: 'desc' }], offset: 1, limit: 3 });
    expect(desc.map((x) => x.val.meta.score)).toEqual([N - 2, N - 3, N - 4]);
    const byLabel = await query({ digest, sort_by: [{ field: 'meta.label', order: 'desc' }], limit: 2 });
    expect(byLabel.map((x) => x.val.id)).toEqual([N - 1, N - 2]);
    // Rows lacking the field come last.
    const byOpt = await query({ digest, sort_by: [{ field: 'opt', order: 'asc' }] });
    expect(byOpt.slice(-4).map((x) => x.val.id)).toEqual([0, 10, 20, 30]);
    const bad = await api.post('/table/query', { project_id: P, digest, sort_by: [{ field: 'meta..score', order: 'asc' }] });
    expect(bad.status).toBe(400);
  });

  it('streams the same rows as JSONL', async () => {
    const lines = await api.jsonl('/table/query_stream', {
      project_id: P,
      digest,
      sort_by: [{ field: 'meta.score', order: 'asc' }],
      limit: 3,
    });
    expect(lines.map((x) => x.val.meta.score)).toEqual([0, 1, 2]);
    expect(Object.keys(lines[0]).sort()).toEqual(['digest', 'original_index', 'val']);
  });
});

describe('a large table', () => {
  it('appends in chunks and pages anywhere (12,000 rows here; 1,000,000 in bench/tables.ts)', async () => {
    let digest = EMPTY;
    const chunk = 4000;
    for (let start = 0; start < 12_000; start += chunk) {
      const updates = Array.from({ length: chunk }, (_, j) => ({ append: { row: { n: start + j, text: `row ${start + j}` } } }));
      const r = await api.post('/table/update', { project_id: P, base_digest: digest, updates });
      expect(r.status, r.text).toBe(200);
      digest = r.body.digest;
    }
    const page = await query({ digest, offset: 10_500, limit: 3 });
    expect(page.map((x) => [x.original_index, x.val.n])).toEqual([
      [10_500, 10_500],
      [10_501, 10_501],
      [10_502, 10_502],
    ]);
    const last = await query({ digest, sort_by: [{ field: 'n', order: 'desc' }], limit: 1 });
    expect(last[0]!.original_index).toBe(11_999);
    // Streams cross the server's internal page boundaries (10,000 rows) without gaps or repeats.
    const all = await api.jsonl('/table/query_stream', { project_id: P, digest });
    expect(all).toHaveLength(12_000);
    expect(all.every((x, i) => x.original_index === i && x.val.n === i)).toBe(true);
    const sorted = await query({ digest, sort_by: [{ field: 'n', order: 'desc' }], offset: 1_000, limit: 10_500 });
    expect(sorted).toHaveLength(10_500);
    expect(sorted.every((x, i) => x.val.n === 10_999 - i)).toBe(true);
  });
});
