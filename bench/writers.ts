/**
 * Writer scaling benchmark (`npm run bench:writers`): how fast 1, 2 and 3 writer processes
 * (services/writer, one consumer group) drain the call-parts topic into one shared ClickHouse
 * engine, and what each call costs in CPU, split between the writers and the engine.
 *
 * For each writer count: a fresh topic (6 partitions) and a fresh store; BENCH_CALLS ~1 KB calls
 * (a start and an end part each, the envelopes the gateway publishes) are produced to Kafka
 * while the writers, settled in the group, wait on the held store; then the store is released
 * and the writers drain the backlog. The figure is the drain rate until 90 % of the backlog is
 * committed (a writer commits only what the store has), with the CPU of the writers and of the
 * engine over that same window: start-up, rebalances, the producer and the tail are left out.
 *
 * The ClickHouse side is chDB behind ClickHouse's HTTP interface (tools/harness
 * clickhouse-http-main.ts): one engine process that every writer inserts into, as into a server.
 *
 * Env: BENCH_CALLS (default 120,000), BENCH_WRITERS (counts to run, default "1,2,3"),
 * KAFKA_BROKERS (else a broker is started from the Maven jars, as in the tests),
 * BENCH_DIR (scratch, wiped; default .bench/writers).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@clickhouse/client';
import { CompressionTypes, Kafka, logLevel, Partitioners } from 'kafkajs';
import { TOPICS } from '@weft/bus';
import { callPartCodec, callPartMessage } from '@weft/ingest';
import { nowMicros } from '@weft/core';
import { endPart, migrate, startPart, type CallPartRow } from '@weft/store';
import { REPO_ROOT, startKafkaBroker, startSharedClickHouse, startWeft, type KafkaBroker, type RunningWeft } from '@weft/harness';

const CALLS = Number(process.env.BENCH_CALLS ?? 120_000);
const COUNTS = (process.env.BENCH_WRITERS ?? '1,2,3').split(',').map(Number);
const PARTITIONS = 6;
const ROOT = process.env.BENCH_DIR ?? join(REPO_ROOT, '.bench', 'writers');

const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
/** CPU time (user + system, all threads) a process has used so far, µs. */
function cpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS;
}

const words = 'the model answered the question about invoices with a short summary and three follow up items'.split(' ');
const text = (n: number, seed: number) => Array.from({ length: n }, (_, i) => words[(i * 7 + seed) % words.length]).join(' ');

/** The parts of `n` ~1 KB calls, built by the gateway's own functions. */
function callRows(project: string, n: number): CallPartRow[] {
  const at = nowMicros();
  const rows: CallPartRow[] = [];
  for (let i = 0; i < n; i++) {
    const id = `wb-${i}`;
    rows.push(
      startPart(
        {
          project_id: project,
          id,
          trace_id: id,
          op_name: 'weave:///acme/bench/op/summarise:v3',
          started_at: '2026-01-01T00:00:00.000001Z',
          attributes: { env: 'bench', model: 'gpt-4o-mini' },
          inputs: {
            messages: [
              { role: 'system', content: text(20, i) },
              { role: 'user', content: text(45, i + 1) },
            ],
          },
        } as never,
        'bench',
        at,
      ),
      endPart(
        {
          project_id: project,
          id,
          ended_at: '2026-01-01T00:00:01.5Z',
          output: { choices: [{ message: { role: 'assistant', content: text(35, i + 2) } }] },
          summary: { usage: { 'gpt-4o-mini': { prompt_tokens: 182, completion_tokens: 64, requests: 1 } } },
        } as never,
        at,
      ),
    );
  }
  return rows;
}

interface Run {
  writers: number;
  calls: number;
  /** Producing the backlog (before any writer runs). */
  produceSeconds: number;
  /** The measured window: all writers holding partitions → 90 % of the backlog committed. */
  measuredCalls: number;
  measuredSeconds: number;
  callsPerSec: number;
  callsPerSecPerWriter: number;
  /** CPU per call: all writer processes together, the ClickHouse engine process, and both. */
  cpuMicrosPerCall: { writers: number; clickhouse: number; total: number };
  /** The engine's calls per second of its own CPU time: what one ClickHouse insert thread sustains. */
  callsPerClickHouseCpuSecond: number;
  storedCalls: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function runWith(n: number, brokers: string, rows: CallPartRow[]): Promise<Run> {
  const dir = join(ROOT, `w${n}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const ch = await startSharedClickHouse(join(dir, 'clickhouse'));
  const prefix = `bench-writers-${n}-${Date.now()}.`;
  const env = {
    WEFT_BUS: 'kafka',
    KAFKA_BROKERS: brokers,
    KAFKA_TOPIC_PREFIX: prefix,
    KAFKA_GROUP_ID: `${prefix}writers`,
    KAFKA_TOPIC_PARTITIONS: String(PARTITIONS),
    // Writers wait on the held store while the backlog is produced, without leaving the group.
    KAFKA_SESSION_TIMEOUT_MS: '120000',
    CLICKHOUSE_URL: ch.url,
    LOG_LEVEL: 'info',
  };
  const writers: RunningWeft[] = [];
  const kafka = new Kafka({ clientId: 'bench-writers', brokers: brokers.split(','), logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  try {
    const topic = prefix + TOPICS.callParts;
    await admin.connect();
    await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: PARTITIONS, replicationFactor: 1 }] });
    // The store migrated beforehand, so that the writers start together; they settle in the
    // group on the empty topic.
    const migrating = createClient({ url: ch.url });
    await migrate(migrating);
    await migrating.close();
    writers.push(
      ...(await Promise.all(
        Array.from({ length: n }, (_, i) =>
          startWeft({ entry: 'services/writer/src/main.ts', dataDir: join(dir, `writer-${i + 1}`), env }),
        ),
      )),
    );
    const held = (w: RunningWeft) =>
      (w.logs as { msg?: string; assignment?: Record<string, number[]> }[])
        .filter((l) => l.msg === 'writer joined the consumer group')
        .at(-1)?.assignment?.[topic]?.length ?? 0;
    const settled = () => writers.every((w) => held(w) > 0) && writers.reduce((sum, w) => sum + held(w), 0) === PARTITIONS;
    const deadline = Date.now() + 600_000;
    while (!settled()) {
      if (Date.now() > deadline) throw new Error(`${n} writers did not settle in the group`);
      await sleep(100);
    }
    const committed = async () => {
      const [offsets] = await admin.fetchOffsets({ groupId: env.KAFKA_GROUP_ID, topics: [topic] });
      return offsets!.partitions.reduce((sum, p) => sum + Math.max(0, Number(p.offset)), 0);
    };
    const cpu = () => [...writers.map((w) => cpuMicros(w.proc.pid!)), cpuMicros(ch.pid)];

    // The backlog, produced while the store is held (its process stopped): the writers fetch and
    // wait on their first insert, holding their partitions (session timeout above), so the drain
    // starts with every writer in place and the producer out of the way.
    const messages = rows.map(callPartMessage).map((m) => ({ key: m.key, value: callPartCodec.encode(m.value) }));
    process.kill(ch.pid, 'SIGSTOP');
    let produceSeconds: number;
    let t1: number;
    let c1: number;
    let cpu1: number[];
    try {
      const produceStarted = performance.now();
      const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
      await producer.connect();
      const chunks: (typeof messages)[] = [];
      for (let i = 0; i < messages.length; i += 2000) chunks.push(messages.slice(i, i + 2000));
      let next = 0;
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          while (next < chunks.length)
            await producer.send({ topic, acks: -1, compression: CompressionTypes.GZIP, messages: chunks[next++]! });
        }),
      );
      produceSeconds = (performance.now() - produceStarted) / 1000;
      await producer.disconnect();
      if (!settled()) throw new Error(`${n} writers: the group rebalanced while the backlog was produced`);
      c1 = await committed();
      cpu1 = cpu();
      t1 = performance.now();
    } finally {
      process.kill(ch.pid, 'SIGCONT');
    }
    const total = messages.length;
    let c2 = c1;
    while ((c2 = await committed()) < 0.9 * total) {
      if (Date.now() > deadline) throw new Error('not drained within 10 min');
      await sleep(100);
    }
    const t2 = performance.now();
    const used = cpu().map((c, i) => c - cpu1[i]!);
    for (;;) {
      if ((await committed()) >= total) break;
      if (Date.now() > deadline) throw new Error('not drained within 10 min');
      await sleep(200);
    }
    const windowCalls = (c2 - c1) / 2;
    const drainSeconds = (t2 - t1) / 1000;
    const writersCpu = used.slice(0, -1).reduce((a, b) => a + b, 0);
    const chCpu = used.at(-1)!;

    const client = createClient({ url: ch.url });
    const [stored] = await (
      await client.query({
        query: `SELECT uniqExact(id) AS n FROM calls_starts WHERE project_id = 'acme/bench-writers'`,
        format: 'JSONEachRow',
      })
    ).json<{ n: string }>();
    await client.close();
    const calls = rows.length / 2;
    return {
      writers: n,
      calls,
      produceSeconds: +produceSeconds.toFixed(2),
      measuredCalls: windowCalls,
      measuredSeconds: +drainSeconds.toFixed(2),
      callsPerSec: Math.round(windowCalls / drainSeconds),
      callsPerSecPerWriter: Math.round(windowCalls / drainSeconds / n),
      cpuMicrosPerCall: {
        writers: Math.round(writersCpu / windowCalls),
        clickhouse: Math.round(chCpu / windowCalls),
        total: Math.round((writersCpu + chCpu) / windowCalls),
      },
      callsPerClickHouseCpuSecond: Math.round(windowCalls / (chCpu / 1e6)),
      storedCalls: Number(stored!.n),
    };
  } finally {
    await admin.disconnect().catch(() => undefined);
    await Promise.all(writers.map((w) => w.stop()));
    await ch.stop();
  }
}

async function main() {
  rmSync(ROOT, { recursive: true, force: true });
  mkdirSync(ROOT, { recursive: true });
  let broker: KafkaBroker | null = null;
  let brokers = process.env.KAFKA_BROKERS;
  if (!brokers) {
    broker = await startKafkaBroker(join(ROOT, 'kafka'));
    brokers = broker.brokers;
  }
  try {
    const rows = callRows('acme/bench-writers', CALLS);
    const runs: Run[] = [];
    for (const n of COUNTS) {
      process.stderr.write(`[bench:writers] ${n} writer(s), ${CALLS} calls…\n`);
      runs.push(await runWith(n, brokers, rows));
    }
    const base = runs[0]!;
    const report = {
      machine: { cores: cpus().length, model: cpus()[0]?.model, loadavg1mAtEnd: +loadavg()[0]!.toFixed(2) },
      note: 'one machine: writers, the ClickHouse engine, the Kafka broker and this driver share its cores; ratios within this run are the figure, not the absolute rates',
      runs,
      speedupOverFirst: runs.map((r) => ({ writers: r.writers, ratio: +(r.callsPerSec / base.callsPerSec).toFixed(2) })),
    };
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    for (const r of runs)
      if (r.storedCalls !== r.calls) throw new Error(`${r.writers} writers: ${r.storedCalls} of ${r.calls} calls stored`);
  } finally {
    await broker?.stop();
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  },
);
