import { describe, expect, it } from 'vitest';
import { useWeft } from './helpers/fixture';

/**
 * WEFT_QUERY_PAGE_ROWS=0: each calls stream is one ClickHouse query (the server-mode default),
 * instead of keyset/candidate pages. Same answers as the paged paths (test/query.test.ts).
 */
const P = 'qa/unpaged';
const T = (s: number) => new Date(Date.UTC(2024, 0, 1) + s * 1000).toISOString();

const { api } = useWeft({ env: { WEFT_QUERY_PAGE_ROWS: '0' } }, async (api) => {
  const batch = Array.from({ length: 30 }, (_, i) => [
    {
      mode: 'start',
      req: {
        start: {
          project_id: P,
          id: `u${String(i).padStart(2, '0')}`,
          op_name: i % 2 ? 'odd' : 'even',
          started_at: T(i),
          inputs: { k: (i * 7) % 11 },
        },
      },
    },
    {
      mode: 'end',
      req: { end: { project_id: P, id: `u${String(i).padStart(2, '0')}`, ended_at: T(i + (i % 5)), output: { ok: i % 3 === 0 } } },
    },
  ]).flat();
  expect((await api.post('/call/upsert_batch', { batch })).status).toBe(200);
});

describe('calls stream as one query', () => {
  it('filters, sorts on a dotted field and a derived one, limits and offsets', async () => {
    const rows = await api.jsonl<any>('/calls/stream_query', {
      project_id: P,
      filter: { op_names: ['odd'] },
      sort_by: [{ field: 'inputs.k', direction: 'asc' }],
    });
    const expected = Array.from({ length: 30 }, (_, i) => i)
      .filter((i) => i % 2)
      .map((i) => ({ id: `u${String(i).padStart(2, '0')}`, k: (i * 7) % 11 }))
      .sort((a, b) => a.k - b.k || a.id.localeCompare(b.id));
    expect(rows.map((r) => r.id)).toEqual(expected.map((e) => e.id));
    const page = await api.jsonl<any>('/calls/stream_query', {
      project_id: P,
      sort_by: [
        { field: 'summary.weave.latency_ms', direction: 'desc' },
        { field: 'id', direction: 'asc' },
      ],
      limit: 4,
      offset: 2,
    });
    // Latencies are (i % 5) s: the six calls with 4 s come first, by id.
    expect(page.map((r) => r.id)).toEqual(['u14', 'u19', 'u24', 'u29']);
    const ok = await api.post('/calls/query_stats', {
      project_id: P,
      query: { $expr: { $eq: [{ $getField: 'output.ok' }, { $literal: true }] } },
    });
    expect(ok.body.count).toBe(10);
  });
});
