import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { metricSeries, startSharedClickHouse, type SharedClickHouse } from '@weft/harness';
import { TOPICS } from '@weft/bus';
import { Client } from '../helpers/client';
import { startKafkaCluster, type KafkaCluster } from '../helpers/kafka-cluster';
import { eventually, pipeline, postCallsUntilStopped } from '../helpers/pipeline';
import { newDataDir, startWeft, type RunningWeft } from '../helpers/server';

// Several writer processes (services/writer) in one consumer group on the tested configuration
// (three brokers, replication 3, min ISR 2), inserting into one shared ClickHouse engine as in
// production: one SIGKILLed under load, one added under load. Nothing acknowledged may be lost,
// nothing may show twice, and every partition's lag in /metrics, up while the store stalls, must
// come back to zero.
const PARTITIONS = 6;
const running: RunningWeft[] = [];
let cluster: KafkaCluster | null = null;
let ch: SharedClickHouse | null = null;
afterAll(async () => {
  await Promise.all(running.map((w) => w.kill()));
  for (const w of running) writeFileSync(join(w.dataDir, 'weft.log'), w.logs.map((l) => JSON.stringify(l)).join('\n'));
  await ch?.stop();
  await cluster?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Join {
  at: number;
  partitions: number[];
}
/** The consumer-group joins a writer logged, with the partitions each gave it. */
function joins(w: RunningWeft, topic: string): Join[] {
  return (w.logs as { msg?: string; time?: number; assignment?: Record<string, number[]> }[])
    .filter((l) => l.msg === 'writer joined the consumer group')
    .map((l) => ({ at: l.time ?? 0, partitions: [...(l.assignment?.[topic] ?? [])].sort((a, b) => a - b) }));
}
const held = (w: RunningWeft, topic: string) => joins(w, topic).at(-1)?.partitions ?? [];

describe('many writers in one consumer group (three brokers, one shared ClickHouse)', () => {
  it('moves a SIGKILLed writer’s partitions, gives partitions to a writer added under load, loses and duplicates nothing, and lag returns to zero', async () => {
    cluster = await startKafkaCluster(3, newDataDir('writers-kafka'));
    ch = await startSharedClickHouse(newDataDir('writers-clickhouse'));
    const p = pipeline(cluster.brokers, 'writers', {
      KAFKA_REPLICATION_FACTOR: '3',
      KAFKA_TOPIC_PARTITIONS: String(PARTITIONS),
      CLICKHOUSE_URL: ch.url,
    });
    const topic = p.prefix + TOPICS.callParts;
    const start = (name: string) =>
      startWeft({ entry: `services/${name}/src/main.ts`, dataDir: newDataDir(`writers-${name}`), env: p.env }).then(
        (w) => (running.push(w), w),
      );
    // The gateway creates the topics and migrates the store; then the rest.
    const gateway = await start('gateway');
    const [w1, w2, w3, query] = await Promise.all([start('writer'), start('writer'), start('writer'), start('query')]);
    const writers = [w1!, w2!, w3!];
    await eventually(
      async () => writers.every((w) => held(w, topic).length > 0) && writers.flatMap((w) => held(w, topic)).length === PARTITIONS,
      90_000,
      'three writers sharing the six partitions',
    );

    const traffic = postCallsUntilStopped(new Client(gateway.url), 'acme/writers', 'w');
    let movedFrom: number[] = [];
    let maxLagSeen = 0;
    try {
      await eventually(async () => traffic.acked.length >= 600, 120_000, 'load flowing');
      // SIGKILL: no leave-group, no final commit; the coordinator finds out by the session timeout.
      movedFrom = held(w2!, topic);
      const killedAt = Date.now();
      await w2!.kill();
      const survivors = [w1!, w3!];
      await eventually(
        async () => {
          for (const w of survivors)
            for (const s of await metricSeries(w.url, 'weft_consumer_lag_messages')) maxLagSeen = Math.max(maxLagSeen, s.value);
          return (
            survivors.every((w) => (joins(w, topic).at(-1)?.at ?? 0) > killedAt) &&
            survivors.flatMap((w) => held(w, topic)).length === PARTITIONS
          );
        },
        90_000,
        'the survivors taking over the killed writer’s partitions',
      );
      expect(survivors.flatMap((w) => held(w, topic)).sort()).toEqual([0, 1, 2, 3, 4, 5]);
      const ackedAtKill = traffic.acked.length;
      await eventually(async () => traffic.acked.length >= ackedAtKill + 400, 120_000, 'load flowing after the kill');

      // A fourth writer, added while the load runs, takes a share.
      const w4 = await start('writer');
      const all = [w1!, w3!, w4];
      await eventually(
        async () => held(w4, topic).length > 0 && all.flatMap((w) => held(w, topic)).length === PARTITIONS,
        90_000,
        'the added writer taking partitions',
      );
      const ackedAtAdd = traffic.acked.length;
      await eventually(async () => traffic.acked.length >= ackedAtAdd + 400, 120_000, 'load flowing after the addition');

      // The store stalls (its process stopped for 3 s, shorter than the session timeout): the
      // inserts in flight wait, the partitions fall behind, and /metrics says so.
      let stallLag = 0;
      process.kill(ch!.pid, 'SIGSTOP');
      try {
        const until = Date.now() + 3_000;
        while (Date.now() < until) {
          for (const w of all)
            for (const s of await metricSeries(w.url, 'weft_consumer_lag_messages')) stallLag = Math.max(stallLag, s.value);
          await sleep(100);
        }
      } finally {
        process.kill(ch!.pid, 'SIGCONT');
      }
      expect(stallLag, 'lag while the store was stalled').toBeGreaterThan(0);
      maxLagSeen = Math.max(maxLagSeen, stallLag);
      const ackedAtStall = traffic.acked.length;
      await eventually(async () => traffic.acked.length >= ackedAtStall + 200, 120_000, 'load flowing after the stall');
    } finally {
      await traffic.stop();
    }
    expect(movedFrom.length).toBeGreaterThan(0);
    process.stderr.write(
      `[writers] acked ${traffic.acked.length} calls; partitions ${movedFrom.join(',')} moved from the killed writer; max lag seen ${maxLagSeen}\n`,
    );

    // Every acknowledged call is queryable, complete, once.
    const api = new Client(query!.url);
    let rows: { id: string; ended_at: string | null }[] = [];
    await eventually(
      async () => {
        rows = await api.jsonl('/calls/stream_query', { project_id: 'acme/writers', columns: ['id', 'ended_at'] });
        const complete = new Set(rows.filter((r) => r.ended_at).map((r) => r.id));
        return traffic.acked.every((id) => complete.has(id));
      },
      180_000,
      'every acknowledged call queryable and complete',
    );
    expect(rows.length, 'rows returned vs distinct ids').toBe(new Set(rows.map((r) => r.id)).size);
    const stats = await api.post('/calls/query_stats', { project_id: 'acme/writers' });
    expect(stats.body.count).toBe(rows.length);

    // Lag: each partition reported by exactly one live writer (the one holding it), back at zero.
    const live = running.filter((w) => w.proc.exitCode === null && w.proc.signalCode === null && joins(w, topic).length > 0);
    await eventually(
      async () => {
        const series = (await Promise.all(live.map((w) => metricSeries(w.url, 'weft_consumer_lag_messages'))))
          .flat()
          .filter((s) => s.labels.topic === topic);
        const partitions = series.map((s) => Number(s.labels.partition)).sort((a, b) => a - b);
        return JSON.stringify(partitions) === JSON.stringify([0, 1, 2, 3, 4, 5]) && series.every((s) => s.value === 0);
      },
      60_000,
      'one lag series per partition, all zero',
    );
  }, 600_000);
});
