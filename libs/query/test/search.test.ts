import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endPart, insertCallParts, migrate, openStore, startPart, wholeCallPart, type Store } from '@weft/store';
import { buildCallsStatsQuery } from '../src/calls';
import { Params } from '../src/params';
import { SEARCH_TEXT, searchTextCondition } from '../src/search';

const migration = readFileSync(fileURLToPath(new URL('../../store/src/migrations/203_search_index.sql', import.meta.url)), 'utf8');

describe('search index', () => {
  it('is built on the searchable text the query narrows by (one definition, two places)', () => {
    for (const [table, text] of Object.entries(SEARCH_TEXT))
      expect(migration).toContain(`ALTER TABLE ${table} ADD INDEX IF NOT EXISTS idx_search ${text} TYPE text(`);
  });
});

// A deterministic stream of numbers (a test that fails can be run again as it was).
function random(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const WORDS = [
  'Refund',
  'billing',
  'LOGIN',
  'timeout',
  'agent',
  'Paris',
  'weather',
  'tool_call',
  'retry',
  'summary',
  'q3-report',
  'user@example.com',
];
const P = 'search/p';
const CALLS = 3000;

interface Seeded {
  id: string;
  op: string;
  display: string | null;
  inputs: unknown;
  output: unknown;
  exception: string | null;
}

describe('calls search over the text indexes (embedded engine)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'weft-search-'));
  let store: Store;
  const calls: Seeded[] = [];
  const rnd = random(42);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;
  const phrase = () =>
    Array.from({ length: 3 + Math.floor(rnd() * 6) }, () => `${pick(WORDS)}${rnd() < 0.3 ? Math.floor(rnd() * 1000) : ''}`).join(' ');

  beforeAll(async () => {
    store = openStore({ dataDir: dir });
    await migrate(store);
    const t0 = Date.parse('2026-10-01T00:00:00Z');
    for (let i = 0; i < CALLS; i++) {
      const c: Seeded = {
        id: `call-${i}`,
        op: `weave:///${P}/op/${pick(['Plan', 'search_docs', 'answer'])}:v1`,
        display: rnd() < 0.3 ? phrase() : null,
        inputs: { question: phrase(), n: i, nested: { text: phrase() } },
        output: rnd() < 0.5 ? phrase() : { answer: phrase(), ok: rnd() < 0.5 },
        exception: rnd() < 0.1 ? `ValueError: ${phrase()}` : null,
      };
      calls.push(c);
    }
    // Three inserts: three parts, so the index has granules to skip.
    for (let b = 0; b < 3; b++) {
      const parts = calls.slice(b * 1000, (b + 1) * 1000).map((c, i) => {
        const at = new Date(t0 + (b * 1000 + i) * 1000).toISOString();
        const start = startPart(
          {
            project_id: P,
            id: c.id,
            trace_id: c.id,
            op_name: c.op,
            display_name: c.display,
            started_at: at,
            inputs: c.inputs as Record<string, unknown>,
            attributes: { tag: phrase() },
          },
          'tester',
          Date.now() * 1000,
        );
        const end = endPart(
          { project_id: P, id: c.id, ended_at: at, output: c.output, exception: c.exception ?? undefined, summary: {} },
          Date.now() * 1000,
        );
        return wholeCallPart(start, end);
      });
      await insertCallParts(store, parts);
    }
    // Embedded, the index is built when parts merge, not on insert (libs/store connection.ts):
    // here, built now for the three parts as they are.
    for (const table of ['calls_starts', 'calls_ends'])
      await store.client.command({
        query: `ALTER TABLE ${table} MATERIALIZE INDEX idx_search`,
        clickhouse_settings: { mutations_sync: '2' },
      });
  }, 120_000);
  afterAll(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The calls view's search: a case-insensitive substring of inputs, output, op, display name or exception. */
  const searchQuery = (text: string) => ({
    $expr: {
      $or: ['inputs', 'output', 'op_name', 'display_name', 'exception'].map((name) => ({
        $contains: { input: { $getField: name }, substr: { $literal: text }, case_insensitive: true },
      })),
    },
  });
  const countOf = async (text: string, settings?: Record<string, number>) => {
    const q = buildCallsStatsQuery({ project_id: P, query: searchQuery(text) } as never);
    return (await store.row<{ count: number }>(q.sql, q.params, { settings }))!.count;
  };
  /** What a full read of every call finds (computed here from what was written). */
  const expected = (text: string) => {
    const t = text.toLowerCase();
    return calls.filter((c) =>
      [
        JSON.stringify(c.inputs),
        typeof c.output === 'string' ? c.output : JSON.stringify(c.output),
        c.op,
        c.display ?? '',
        c.exception ?? '',
      ].some((v) => v.toLowerCase().includes(t)),
    ).length;
  };

  it('answers exactly the calls a full read finds, for 1,000 random words and substrings in any case', async () => {
    const needles: string[] = [];
    for (let i = 0; i < 1000; i++) {
      const w = pick(WORDS) + (rnd() < 0.3 ? String(Math.floor(rnd() * 1000)) : '');
      const kind = rnd();
      let n =
        kind < 0.4
          ? w
          : kind < 0.7
            ? w.slice(Math.floor(rnd() * 3), Math.max(4, w.length - Math.floor(rnd() * 3)))
            : kind < 0.85
              ? `${w} ${pick(WORDS)}`
              : `${pick(['zz', 'qx', 'nope', 'xyzzy'])}${Math.floor(rnd() * 100)}`;
      n = rnd() < 0.5 ? n.toUpperCase() : rnd() < 0.5 ? n.toLowerCase() : n;
      needles.push(n);
    }
    let nonEmpty = 0;
    for (const n of needles) {
      const got = await countOf(n);
      expect(got, n).toBe(expected(n));
      if (got > 0) nonEmpty++;
    }
    // Both kinds were asked: words that match some calls, and words that match none.
    expect(nonEmpty).toBeGreaterThan(300);
    expect(nonEmpty).toBeLessThan(1000);
  }, 300_000);

  it('reads the calls the index names, not every call: the engine skips granules', async () => {
    for (const needle of ['xyzzynowhere', 'xyzzy-nowhere at all']) {
      const p = new Params();
      const cond = searchTextCondition('calls_starts', needle, p);
      const plan = await store.rows<{ explain: string }>(
        `EXPLAIN indexes = 1 SELECT id FROM calls_starts WHERE project_id = 'search/p' AND ${cond}`,
        p.values,
      );
      const text = plan.map((r) => r.explain).join('\n');
      expect(text, needle).toMatch(/Name: idx_search/);
      const granules = /Name: idx_search[\s\S]*?Granules: (\d+)\/(\d+)/.exec(text);
      expect(granules, text).not.toBeNull();
      expect(Number(granules![1]), text).toBeLessThan(Number(granules![2]));
      expect(await countOf(needle)).toBe(0);
    }
    // With the indexes off the engine reads everything and finds the same.
    expect(await countOf('refund', { use_skip_indexes: 0 })).toBe(expected('refund'));
  });
});
