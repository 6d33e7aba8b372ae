import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearerAuth, Client } from './helpers/client';
import { startWeft, type RunningWeft } from './helpers/server';

/**
 * A search's pages sorted by start time are read a span of start times at a time (5 minutes,
 * ×4 up to 56 days, then all: services/query calls.ts). Whatever spans a page needs, it holds
 * exactly the rows a full read finds, in order, page after page: calls spread over ~200 days
 * with bursts and gaps, needles from every call to none, both directions, pages of 7 rows read
 * through the stream's cursors, searches on start fields only and on start and end fields.
 */
const P = 'search/pages';
const CALLS = 1500;
const WORDS = ['alpha', 'Bravo', 'charlie', 'delta-9', 'echo', 'foxtrot', 'golf'];

// A deterministic stream of numbers (a failing run can be repeated as it was).
function random(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

interface Seeded {
  id: string;
  at: number;
  question: string;
  answer: string;
}

let weft: RunningWeft;
let api: Client;
const calls: Seeded[] = [];

beforeAll(async () => {
  // Pages of 7 rows at most per engine query: a stream of 30 reads several pages, each after a cursor.
  weft = await startWeft({ env: { WEFT_QUERY_PAGE_ROWS: '7', WEFT_RATE_LIMIT_MAX: '0' } });
  api = new Client(weft.url, bearerAuth('test-key'));
  const rnd = random(7);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;
  let at = Date.UTC(2026, 0, 1);
  for (let i = 0; i < CALLS; i++) {
    // Bursts (seconds apart), hours apart, and now and then a gap of weeks.
    const r = rnd();
    at += r < 0.6 ? 1_000 : r < 0.97 ? 3_600_000 * 3 * rnd() : 86_400_000 * 40 * rnd();
    // The word `golf` only in the first and the last calls: a search that walks every span.
    const rare = i < 3 || i >= CALLS - 3 ? ' golf' : '';
    calls.push({
      id: `c-${String(i).padStart(5, '0')}`,
      at,
      question: `${pick(WORDS.slice(0, 6))} ${pick(WORDS.slice(0, 6))}${rnd() < 0.1 ? ' delta-9x' : ''}${rare}`,
      answer: rnd() < 0.2 ? `ECHO ${i}` : `${pick(['x-ray', 'yankee', 'zulu'])}`,
    });
  }
  for (let b = 0; b < CALLS; b += 500) {
    const batch = calls.slice(b, b + 500).flatMap((c) => [
      {
        mode: 'start',
        req: {
          start: {
            project_id: P,
            id: c.id,
            trace_id: c.id,
            op_name: 'answer',
            started_at: new Date(c.at).toISOString(),
            inputs: { question: c.question },
            attributes: {},
          },
        },
      },
      {
        mode: 'end',
        req: { end: { project_id: P, id: c.id, ended_at: new Date(c.at + 500).toISOString(), output: { answer: c.answer }, summary: {} } },
      },
    ]);
    expect((await api.post('/call/upsert_batch', { batch })).status).toBe(200);
  }
}, 180_000);
afterAll(async () => {
  await weft?.stop();
});

const contains = (field: string, text: string) => ({
  $contains: { input: { $getField: field }, substr: { $literal: text }, case_insensitive: true },
});

describe('a search read a span of start times at a time', () => {
  const needles = ['alpha', 'bravo', 'DELTA-9', 'delta-9x', 'golf', 'echo 14', 'ech', 'nowhere-at-all', 'a'];
  for (const fields of [['inputs'], ['inputs', 'output']]) {
    for (const direction of ['desc', 'asc'] as const) {
      it(`pages hold what a full read finds (${fields.join(' + ')}, ${direction})`, async () => {
        for (const needle of needles) {
          const t = needle.toLowerCase();
          const expected = calls
            .filter(
              (c) =>
                JSON.stringify({ question: c.question }).toLowerCase().includes(t) ||
                (fields.includes('output') && JSON.stringify({ answer: c.answer }).toLowerCase().includes(t)),
            )
            .sort((x, y) => (direction === 'asc' ? x.at - y.at || (x.id < y.id ? -1 : 1) : y.at - x.at || (x.id < y.id ? 1 : -1)))
            .map((c) => c.id);
          for (const limit of [5, 30]) {
            const rows = await api.jsonl<{ id: string }>('/calls/stream_query', {
              project_id: P,
              query: { $expr: fields.length === 1 ? contains(fields[0]!, needle) : { $or: fields.map((f) => contains(f, needle)) } },
              sort_by: [{ field: 'started_at', direction }],
              limit,
              columns: ['id'],
            });
            expect(
              rows.map((r) => r.id),
              `${needle} limit ${limit}`,
            ).toEqual(expected.slice(0, limit));
          }
        }
      }, 120_000);
    }
  }

  it('finds a call by the name it was renamed to (a rename is not in the start the index was built on), and not by its old one', async () => {
    const renamed = calls[700]!;
    expect((await api.post('/call/update', { project_id: P, call_id: renamed.id, display_name: 'Quokka-Release' })).status).toBe(200);
    const search = async (text: string) =>
      (
        await api.jsonl<{ id: string }>('/calls/stream_query', {
          project_id: P,
          query: { $expr: { $or: ['inputs', 'output', 'display_name'].map((f) => contains(f, text)) } },
          sort_by: [{ field: 'started_at', direction: 'desc' }],
          limit: 10,
          columns: ['id'],
        })
      ).map((r) => r.id);
    expect(await search('quokka-rel')).toEqual([renamed.id]);
    expect((await api.post('/call/update', { project_id: P, call_id: renamed.id, display_name: 'Wombat' })).status).toBe(200);
    expect(await search('quokka-rel')).toEqual([]);
    expect(await search('WOMBAT')).toEqual([renamed.id]);
    const count = await api.post('/calls/query_stats', {
      project_id: P,
      query: { $expr: { $or: ['inputs', 'display_name'].map((f) => contains(f, 'wombat')) } },
    });
    expect(count.body.count).toBe(1);
  });

  it('a page after an offset holds what a full read finds there', async () => {
    const expected = calls
      .filter((c) => c.question.toLowerCase().includes('bravo'))
      .sort((x, y) => y.at - x.at || (x.id < y.id ? 1 : -1))
      .map((c) => c.id);
    const rows = await api.jsonl<{ id: string }>('/calls/stream_query', {
      project_id: P,
      query: { $expr: { $or: [contains('inputs', 'bravo'), contains('output', 'bravo')] } },
      sort_by: [{ field: 'started_at', direction: 'desc' }],
      offset: 40,
      limit: 10,
      columns: ['id'],
    });
    expect(rows.map((r) => r.id)).toEqual(expected.slice(40, 50));
  });
});
