import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Kafka, Partitioners, logLevel } from 'kafkajs';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { DEAD_LETTER_HEADERS, TOPICS } from '@weft/bus';
import { callPartCodec } from '@weft/ingest';
import { endPart, startPart, wholeCallPart } from '@weft/store';
import { Client } from './helpers/client';
import { REPO_ROOT } from './helpers/paths';
import { eventually, pipeline, queriedIds } from './helpers/pipeline';
import type { RunningWeft } from './helpers/server';

/**
 * The Kafka dead-letter topic through the same admin endpoints and `weft dead-letters` as the
 * ingest log's (distributed mode: a gateway and a writer on a real broker). Two records are put
 * in the topic as the writer writes them (a call part the store refused, with its reason and
 * origin in the headers); a third gets there the real way, a value the writer cannot decode. The
 * gateway lists them, shows one's call part, replays it through the normal write path into a
 * query result (once), discards another, and refuses to replay the undecodable one.
 */
const brokers = inject('kafkaBrokers');
const running: RunningWeft[] = [];
afterAll(async () => {
  await Promise.all(running.map((w) => w.kill()));
});

const P = 'acme/dlq';
const TS = '2024-06-01T00:00:00Z';
const ID = '0199cccc-0000-7000-8000-000000000001';
const OTHER = '0199cccc-0000-7000-8000-000000000002';
const part = (id: string) =>
  callPartCodec.encode({
    v: 1,
    kind: 'call_part',
    row: wholeCallPart(
      startPart({ project_id: P, id, trace_id: id, op_name: 'refused-once', started_at: TS, inputs: { id }, attributes: {} }, 'u-dlq', 1),
      endPart({ project_id: P, id, ended_at: TS, output: 'ok', summary: {} }, 1),
    ),
  });

describe('the Kafka dead-letter topic through the API and the CLI', () => {
  it('lists, shows, replays once into a query result, discards; an undecodable one is shown and not replayed', async () => {
    const p = pipeline(brokers, 'dlq', { KAFKA_TOPIC_PARTITIONS: '1' });
    const [gateway, writer] = await Promise.all([p.startGateway(), p.startWriter()]);
    running.push(gateway, writer);
    const api = new Client(gateway.url);

    const kafka = new Kafka({ clientId: 'dlq-test', brokers: [brokers], logLevel: logLevel.NOTHING });
    const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    const origin = p.prefix + TOPICS.callParts;
    const headers = (offset: string) => ({
      [DEAD_LETTER_HEADERS.reason]: 'store rejected: Code: 27. Cannot parse input (a test stand-in)',
      [DEAD_LETTER_HEADERS.topic]: origin,
      [DEAD_LETTER_HEADERS.partition]: '0',
      [DEAD_LETTER_HEADERS.offset]: offset,
    });
    await producer.send({
      topic: p.prefix + TOPICS.deadLetter,
      messages: [
        { key: `${P}/${ID}`, value: part(ID), headers: headers('7') },
        { key: `${P}/${OTHER}`, value: part(OTHER), headers: headers('8') },
      ],
    });
    // The real way: a value the writer cannot decode, dead-lettered by it with its reason.
    await producer.send({ topic: origin, messages: [{ key: `${P}/garbage`, value: 'this is not a call part' }] });
    await producer.disconnect();

    type Entry = {
      seq: number;
      partition: number;
      offset: number;
      topic: string;
      reason: string;
      state: string;
      values: number;
      handled_at: string | null;
    };
    const list = async () => {
      const r = await api.post('/admin/dead_letters/list', {});
      if (r.status !== 200)
        throw new Error(
          `/admin/dead_letters/list → ${r.status}: ${r.text} ${JSON.stringify(gateway.logs.filter((l) => (l as { level: number }).level >= 50))}`,
        );
      return r.body.dead_letters as Entry[];
    };
    await eventually(async () => (await list()).length === 3, 60_000, 'three dead letters listed');
    const [first, second, garbage] = await list();
    expect(first).toMatchObject({
      partition: 0,
      offset: 0,
      topic: TOPICS.callParts,
      state: 'pending',
      values: 1,
      reason: expect.stringContaining('Cannot parse input'),
    });
    expect(second).toMatchObject({ offset: 1, state: 'pending' });
    expect(garbage).toMatchObject({
      offset: 2,
      topic: TOPICS.callParts,
      values: 0,
      reason: expect.stringMatching(/not JSON|invalid envelope/),
    });

    const shown = await api.post('/admin/dead_letters/read', { seq: first!.seq });
    expect(shown.status, shown.text).toBe(200);
    expect(shown.body.payload).toMatchObject([{ project_id: P, id: ID, op_name: 'refused-once' }]);
    expect((await api.post('/admin/dead_letters/read', { seq: garbage!.seq })).body.payload).toEqual([{ undecodable: expect.any(String) }]);
    expect((await api.post('/admin/dead_letters/read', { seq: 99 })).status).toBe(404);

    expect(await queriedIds(writer.url, P)).toEqual([]);
    const replayed = await api.post('/admin/dead_letters/replay', { seq: first!.seq });
    expect(replayed.status, replayed.text).toBe(200);
    expect(replayed.body).toMatchObject({ seq: first!.seq, state: 'replayed' });
    await eventually(async () => (await queriedIds(writer.url, P)).includes(ID), 30_000, 'the replayed call queryable');
    // Again: answered as the first time, nothing published.
    const again = await api.post('/admin/dead_letters/replay', { seq: first!.seq });
    expect(again.body).toMatchObject({ state: 'replayed', handled_at: replayed.body.handled_at });

    expect((await api.post('/admin/dead_letters/discard', { seq: second!.seq })).body).toMatchObject({ state: 'discarded' });
    expect((await api.post('/admin/dead_letters/replay', { seq: second!.seq })).body.state).toBe('discarded');
    const refused = await api.post('/admin/dead_letters/replay', { seq: garbage!.seq });
    expect([refused.status, refused.body.field]).toEqual([422, 'seq']);
    expect(refused.body.reason).toMatch(/does not decode.*discard it/);

    const { stdout } = await promisify(execFile)(
      process.execPath,
      [join(REPO_ROOT, 'services/cli/bin/weft.mjs'), 'dead-letters', 'list', '--state', 'pending'],
      { env: { ...process.env, WEFT_URL: gateway.url, WEFT_API_KEY: 'test-key' }, timeout: 60_000 },
    );
    expect((JSON.parse(stdout) as { dead_letters: Entry[] }).dead_letters.map((d) => d.seq)).toEqual([garbage!.seq]);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await queriedIds(writer.url, P)).toEqual([ID]);
  }, 240_000);
});
