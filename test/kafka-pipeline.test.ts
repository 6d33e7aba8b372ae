import { Kafka, Partitioners, logLevel } from 'kafkajs';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { DEAD_LETTER_HEADERS, TOPICS } from '@weft/bus';
import { callPartCodec } from '@weft/ingest';
import { callPartTsvLine } from '@weft/harness';
import type { CallPartRow } from '@weft/store';
import { Client } from './helpers/client';
import { assignedPartitions, eventually, metricValue, pipeline, queriedIds, upsertBatch } from './helpers/pipeline';
import type { RunningWeft } from './helpers/server';

// Topology: every test runs the gateway and the writer(+query) as separate processes on the
// broker the run shares (see test/helpers/pipeline.ts); the broker-outage test has its own broker.
const brokers = inject('kafkaBrokers');
const running: RunningWeft[] = [];
const track = <T extends RunningWeft>(w: T): T => (running.push(w), w);
afterAll(async () => {
  await Promise.all(running.map((w) => w.kill()));
});

const idsFor = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${String(i).padStart(5, '0')}`);

describe('gateway → Kafka → writer → ClickHouse', () => {
  it('makes calls posted to the gateway queryable through the query service, counts them in /metrics, and commits on a graceful stop', async () => {
    const p = pipeline(brokers, 'e2e');
    const [gateway, writer] = await Promise.all([p.startGateway().then(track), p.startWriter().then(track)]);
    const api = new Client(gateway.url);
    const ids = idsFor('e2e', 300);
    // 200 calls with start and end in one batch (one part each), 100 with their starts and ends in separate batches.
    type Batch = { batch: { mode: string }[] };
    const together = ids.slice(0, 200);
    const apart = upsertBatch('acme/e2e', ids.slice(200)) as Batch;
    const bodies = [
      upsertBatch('acme/e2e', together.slice(0, 100)),
      upsertBatch('acme/e2e', together.slice(100)),
      { batch: apart.batch.filter((b) => b.mode === 'start') },
      { batch: apart.batch.filter((b) => b.mode === 'end') },
    ];
    for (const body of bodies) {
      const r = await api.post('/call/upsert_batch', body);
      expect(r.status).toBe(200);
    }
    await eventually(async () => (await queriedIds(writer.url, 'acme/e2e')).length === ids.length, 30_000, 'all calls queryable');
    // Every call whole: its start and end travelled as one part, or separately and were merged
    // (the separate ends are a later publish: their start rows may be queryable before them).
    const whole = (c: any) => c.ended_at && c.output?.ok === c.id && c.inputs?.id === c.id;
    const stream = () => new Client(writer.url).jsonl('/calls/stream_query', { project_id: 'acme/e2e' });
    await eventually(async () => (await stream()).every(whole), 30_000, 'every call whole');
    const calls = await stream();
    expect(calls.map((c) => c.id).sort()).toEqual(ids);
    expect(calls.every(whole)).toBe(true);
    expect(await metricValue(gateway.url, 'weft_call_parts_accepted_total')).toBe(600);
    expect(await metricValue(gateway.url, 'weft_producer_latency_seconds_count')).toBe(4);
    // 200 whole-call parts, 100 starts, 100 ends (a replay after a rebalance may add some).
    expect(await metricValue(writer.url, 'weft_writer_batch_rows_sum')).toBeGreaterThanOrEqual(400);
    expect(await metricValue(writer.url, 'weft_writer_batch_rows_sum')).toBeLessThan(600);
    expect(await metricValue(writer.url, 'weft_consumer_lag_messages')).toBeGreaterThanOrEqual(0);

    // A graceful stop commits what was inserted: the group's offsets reach the end of every partition.
    expect(await writer.stop()).toBe(0);
    const admin = new Kafka({ clientId: 'e2e-test', brokers: [brokers], logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    const topic = p.prefix + TOPICS.callParts;
    const ends = await admin.fetchTopicOffsets(topic);
    const [committed] = await admin.fetchOffsets({ groupId: p.env.KAFKA_GROUP_ID!, topics: [topic] });
    await admin.disconnect();
    const byPartition = (xs: { partition: number; offset: string }[]) => Object.fromEntries(xs.map((x) => [x.partition, x.offset]));
    expect(byPartition(committed!.partitions)).toEqual(byPartition(ends));
    // Each publish wrote one record per partition (envelope version 3).
    expect(ends.reduce((n, e) => n + Number(e.offset), 0)).toBe(4 * ends.length);
  });

  it('loses nothing and shows no duplicates when the writer is killed mid-stream and restarted', async () => {
    const p = pipeline(brokers, 'kill', { WEFT_WRITER_BATCH_ROWS: '200' });
    const gateway = track(await p.startGateway());
    const first = track(await p.startWriter());
    const api = new Client(gateway.url);
    const acked: string[] = [];
    let n = 0;
    let stop = false;
    const producer = async () => {
      while (!stop) {
        const ids = idsFor(`kill-${n++}`, 50);
        const r = await api.post('/call/upsert_batch', upsertBatch('acme/kill', ids));
        if (r.status === 200) acked.push(...ids);
      }
    };
    const producers = [producer(), producer()];
    // Kill the writer while it is inserting: after some inserts, with more arriving.
    await eventually(async () => (await metricValue(first.url, 'weft_writer_batch_rows_count')) >= 3, 30_000, 'writer inserting');
    await first.kill();
    await new Promise((r) => setTimeout(r, 500));
    stop = true;
    await Promise.all(producers);
    expect(acked.length).toBeGreaterThan(0);

    const second = track(await p.startWriter({ dataDir: first.dataDir }));
    await eventually(async () => (await queriedIds(second.url, 'acme/kill')).length >= acked.length, 40_000, 'replayed calls');
    const ids = await queriedIds(second.url, 'acme/kill');
    expect(ids.length).toBe(new Set(ids).size);
    expect([...ids].sort()).toEqual([...acked].sort());
    const stats = await new Client(second.url).post('/calls/query_stats', { project_id: 'acme/kill' });
    expect(stats.body.count).toBe(acked.length);
  }, 180_000); // two writer starts and a kill: headroom for a loaded 2-core machine

  it('dead-letters poison messages with reason and origin, and still writes the calls behind them', async () => {
    const p = pipeline(brokers, 'poison', { KAFKA_TOPIC_PARTITIONS: '1' });
    const gateway = track(await p.startGateway());
    const writer = track(await p.startWriter());
    const kafka = new Kafka({ clientId: 'poison-test', brokers: [brokers], logLevel: logLevel.NOTHING });
    const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    const topic = p.prefix + TOPICS.callParts;
    const badRow = {
      v: 1,
      kind: 'call_part',
      row: {
        project_id: 'acme/poison',
        id: 'bad-date',
        started_at: 'not a timestamp',
        input_refs: [],
        output_refs: [],
        created_at: '2026-01-01 00:00:00.000000',
      },
    };
    const goodRow: CallPartRow = {
      project_id: 'acme/poison-joined',
      id: 'good',
      trace_id: 't',
      op_name: 'op',
      started_at: Date.UTC(2026, 0, 1) * 1000,
      attributes_dump: '{}',
      inputs_dump: '{}',
      input_refs: [],
      output_refs: [],
      created_at: Date.UTC(2026, 0, 1) * 1000,
    };
    await producer.send({
      topic,
      messages: [
        { key: 'acme/poison/x', value: 'this is not json' },
        { key: 'acme/poison/y', value: JSON.stringify({ v: 2, kind: 'call_part', row: {} }) },
        // The pre-1.0 envelopes are not read: version 1 (JSON), 2 and 3 (TabSeparated lines), 4 (RowBinary without the entrance).
        { key: 'acme/poison/bad-date', value: JSON.stringify(badRow) },
        { key: 'acme/poison/z', value: Buffer.from('\u0002acme/poison\tz\n') },
        { key: 'acme/poison/bad-date-2', value: Buffer.from('\u0002' + callPartTsvLine({ ...goodRow, id: 'bad-date-2' })) },
        {
          key: 'acme/poison-joined/good',
          value: Buffer.from('\u0003' + callPartTsvLine({ ...goodRow, id: 'good' }) + callPartTsvLine({ ...goodRow, id: 'bad-date-3' })),
        },
        // Version 5 (the 1.0 envelope), cut short.
        {
          key: 'acme/poison/cut',
          value: callPartCodec.encode({ v: 1, kind: 'call_part', row: { ...goodRow, id: 'cut' } }).subarray(0, 20),
        },
        // Version 5, whole: stored behind the poison.
        { key: 'acme/poison-joined/good-5', value: callPartCodec.encode({ v: 1, kind: 'call_part', row: { ...goodRow, id: 'good-5' } }) },
      ],
    });
    await producer.disconnect();
    const ids = idsFor('behind', 20);
    expect((await new Client(gateway.url).post('/call/upsert_batch', upsertBatch('acme/poison', ids))).status).toBe(200);
    await eventually(async () => (await queriedIds(writer.url, 'acme/poison')).length === ids.length, 30_000, 'calls behind the poison');
    expect((await queriedIds(writer.url, 'acme/poison')).sort()).toEqual(ids);

    const consumer = kafka.consumer({ groupId: `${p.prefix}dlq-reader` });
    await consumer.connect();
    await consumer.subscribe({ topic: p.prefix + TOPICS.deadLetter, fromBeginning: true });
    const letters: { value: string; headers: Record<string, string> }[] = [];
    await consumer.run({
      eachMessage: async ({ message }) => {
        const headers = Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)]));
        letters.push({ value: message.value!.toString(), headers });
      },
    });
    await eventually(async () => letters.length >= 7, 20_000, 'dead letters');
    await consumer.disconnect();
    // What does not decode is dead-lettered before the batch's insert, what the store refuses after it.
    letters.sort((a, b) => Number(a.headers[DEAD_LETTER_HEADERS.offset]) - Number(b.headers[DEAD_LETTER_HEADERS.offset]));
    expect(letters.map((l) => l.headers[DEAD_LETTER_HEADERS.offset])).toEqual(['0', '1', '2', '3', '4', '5', '6']);
    expect(letters.every((l) => l.headers[DEAD_LETTER_HEADERS.topic] === topic && l.headers[DEAD_LETTER_HEADERS.partition] === '0')).toBe(
      true,
    );
    expect(letters[0]!.value).toBe('this is not json');
    expect(letters[0]!.headers[DEAD_LETTER_HEADERS.reason]).toMatch(/invalid envelope: a first byte of 0x74/);
    for (const i of [1, 2]) expect(letters[i]!.headers[DEAD_LETTER_HEADERS.reason]).toMatch(/envelope version 1 is not read/);
    for (const i of [3, 4]) expect(letters[i]!.headers[DEAD_LETTER_HEADERS.reason]).toMatch(/envelope version 2 is not read/);
    // The whole pre-1.0 record, as it came.
    expect(letters[5]!.value.charCodeAt(0)).toBe(3);
    expect(letters[5]!.headers[DEAD_LETTER_HEADERS.reason]).toMatch(/envelope version 3 is not read/);
    expect(letters[6]!.headers[DEAD_LETTER_HEADERS.reason]).toMatch(/invalid envelope \(version 5, part 1\): cut short/);
    expect(await queriedIds(writer.url, 'acme/poison-joined')).toEqual(['good-5']);
    expect(await metricValue(writer.url, 'weft_dead_lettered_total')).toBeGreaterThanOrEqual(1);
  });

  it('two writers in one group share the partitions and together write every call exactly once', async () => {
    const p = pipeline(brokers, 'two', { KAFKA_TOPIC_PARTITIONS: '4' });
    const gateway = track(await p.startGateway());
    const [a, b] = [track(await p.startWriter()), track(await p.startWriter())];
    // Wait for the group to settle with both members holding partitions.
    await eventually(
      async () => assignedPartitions(a)! > 0 && assignedPartitions(b)! > 0 && assignedPartitions(a)! + assignedPartitions(b)! === 4,
      30_000,
      'both writers assigned',
    );
    const ids = idsFor('two', 400);
    const api = new Client(gateway.url);
    for (let i = 0; i < ids.length; i += 50) {
      expect((await api.post('/call/upsert_batch', upsertBatch('acme/two', ids.slice(i, i + 50)))).status).toBe(200);
    }
    let inA: string[] = [];
    let inB: string[] = [];
    await eventually(
      async () => {
        [inA, inB] = await Promise.all([queriedIds(a.url, 'acme/two'), queriedIds(b.url, 'acme/two')]);
        return inA.length + inB.length >= ids.length;
      },
      30_000,
      'calls written by the two writers',
    );
    // Each writer has its own store here, so the split is visible: disjoint, and complete together.
    expect(inA.length).toBeGreaterThan(0);
    expect(inB.length).toBeGreaterThan(0);
    expect(inA.filter((id) => inB.includes(id))).toEqual([]);
    expect([...inA, ...inB].sort()).toEqual(ids);
  });
});
