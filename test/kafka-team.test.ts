import { afterAll, describe, expect, inject, it } from 'vitest';
import { Client } from './helpers/client';
import { eventually, pipeline } from './helpers/pipeline';
import type { RunningWeft } from './helpers/server';

/**
 * A team at once in Kafka mode (docs/operations.md, "Lanes"): the writer consumes the topics
 * into the engine it shares with the query role, and the same lanes hold there — a small query
 * on a quiet project answers while two heavy analytics queries run on a busy one and calls keep
 * arriving through the gateway. (The all-in-one side: test/team.test.ts, libs/store/test/lanes.test.ts.)
 */
const brokers = inject('kafkaBrokers');
const running: RunningWeft[] = [];
afterAll(async () => {
  await Promise.all(running.map((w) => w.kill()));
});

const BUSY = 'acme/busy';
const QUIET = 'acme/quiet';
const CALLS = 40_000;
const DAY = Date.parse('2026-11-01T00:00:00Z');

function calls(project: string, from: number, n: number) {
  return {
    batch: Array.from({ length: n }, (_, i) => {
      const k = from + i;
      const id = `${project.split('/')[1]}-${k}`;
      const started = new Date(DAY + k * 60_000).toISOString();
      return [
        {
          mode: 'start',
          req: {
            start: {
              project_id: project,
              id,
              trace_id: id,
              op_name: `weave:///${project}/op/step${k % 7}:v1`,
              started_at: started,
              inputs: { text: `request ${k} about ${['billing', 'refunds', 'login', 'search'][k % 4]} ${'lorem ipsum '.repeat(20)}` },
              attributes: {},
            },
          },
        },
        {
          mode: 'end',
          req: {
            end: {
              project_id: project,
              id,
              ended_at: new Date(DAY + k * 60_000 + (k % 997)).toISOString(),
              output: { ok: k % 5 !== 0 },
              summary: {},
            },
          },
        },
      ];
    }).flat(),
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function timed<T>(f: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  const value = await f();
  return { ms: performance.now() - t0, value };
}

describe('a team at once, in Kafka mode', () => {
  it('a small query on a quiet project answers beside two heavy analytics queries and the writer’s inserts', async () => {
    const p = pipeline(brokers, 'team');
    const [gateway, writer] = await Promise.all([
      p.startGateway({ WEFT_RATE_LIMIT_MAX: '0' }),
      p.startWriter({ env: { WEFT_RATE_LIMIT_MAX: '0' } }),
    ]);
    running.push(gateway, writer);
    const ingest = new Client(gateway.url);
    const query = new Client(writer.url);
    for (let from = 0; from < CALLS; from += 2000)
      expect((await ingest.post('/call/upsert_batch', calls(BUSY, from, 2000))).status).toBe(200);
    expect((await ingest.post('/call/upsert_batch', calls(QUIET, 0, 1))).status).toBe(200);
    const count = async (project: string) => Number((await query.post('/calls/query_stats', { project_id: project })).body.count ?? 0);
    await eventually(async () => (await count(BUSY)) === CALLS && (await count(QUIET)) === 1, 60_000, 'every call queryable');

    const heavyQuery = () =>
      query.post('/analytics/query', {
        project_id: BUSY,
        dimensions: ['op', 'time', 'inputs.text'],
        metrics: ['count', 'errors', 'latency_p50_ms', 'latency_p99_ms'],
        bucket: 'day',
      });
    const small = async () => {
      const r = await timed(() => query.post('/calls/query_stats', { project_id: QUIET }));
      expect(r.value.status, r.value.text).toBe(200);
      expect(r.value.body.count).toBe(1);
      return r.ms;
    };
    const alone = median([await small(), await small(), await small(), await small(), await small()]);
    const heavyAlone = (await timed(heavyQuery)).ms;

    // Two people running heavy queries for five seconds, calls still arriving through the gateway,
    // and the small query every 50 ms meanwhile.
    let more = CALLS;
    const until = Date.now() + 5000;
    const statuses: number[] = [];
    const heavyLoop = async () => {
      while (Date.now() < until) statuses.push((await heavyQuery()).status);
    };
    const heavy = Promise.all([heavyLoop(), heavyLoop()]);
    const beside: number[] = [];
    while (Date.now() < until) {
      const posted = ingest.post('/call/upsert_batch', calls(BUSY, more, 200));
      more += 200;
      beside.push(await small());
      expect((await posted).status).toBe(200);
      await new Promise((r) => setTimeout(r, 50));
    }
    await heavy;
    for (const s of statuses) expect([200, 429]).toContain(s);
    // Beside them, within a small factor of alone: on one shared lane a small query waits for
    // the heavy one ahead of it (half of one, typically), here it has a connection of its own.
    const figures = JSON.stringify({ alone, heavyAlone, beside });
    expect(median(beside), figures).toBeLessThan(Math.max(alone * 5, heavyAlone / 3));
    // The writer's inserts went on in their own lane: the calls posted meanwhile are queryable.
    await eventually(async () => (await count(BUSY)) === more, 60_000, 'the calls posted beside the heavy queries queryable');
  }, 300_000);
});
