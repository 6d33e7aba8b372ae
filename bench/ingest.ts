/**
 * Ingest benchmark (`npm run bench:ingest`): concurrent clients post /call/upsert_batch with
 * ~1 KB calls (a start and an end part each) to the all-in-one mode and to the Kafka mode
 * (gateway process → Kafka → writer+query process), next to two ceilings measured on the same
 * rows in the same run: direct ClickHouse inserts and direct kafkajs produces.
 *
 * Reports calls/s acknowledged, acknowledged→queryable delay (p50/p99), the gateway's peak RSS,
 * and the top self-time functions of a CPU profile (`node --cpu-prof`) of the gateway.
 *
 * Env: BENCH_SECONDS (default 20), BENCH_WARMUP_SECONDS (the same load first, not measured: 5),
 * BENCH_CLIENTS (8), BENCH_CALLS_PER_REQUEST (100), BENCH_POLL_MS (the ack→queryable sampler's poll, 10),
 * BENCH_CEILING_CALLS (calls whose parts make the direct-insert ceiling, 50,000),
 * KAFKA_COMPRESSION (gzip), KAFKA_BROKERS (else a broker is started from the Maven jars, as in the tests),
 * BENCH_MODES (`aio,kafka`: which modes to run; without kafka no broker is started),
 * BENCH_NODE_ARGS (more node flags for the serving processes, space-separated), BENCH_CPU_PROFILE
 * (1: the serving processes run under `--cpu-prof` and their top functions are printed; 0: not),
 * BENCH_CONVERSION_MS (how long each of the request body's conversion rates is measured, 2000),
 * BENCH_RATE (calls/s offered, paced across the clients; 0, the default: each client posts again as
 * soon as it is answered). At saturation the ack→queryable delay follows the batch sizes the
 * acceptance rate makes, so two builds compare their delay at the same offered rate below both ceilings.
 * The serving processes inherit this process's environment (e.g. WEFT_INGEST_WORKERS=1).
 * The ClickHouse side is embedded chDB in both modes (no ClickHouse server on our machines).
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { Kafka, Partitioners, CompressionTypes, logLevel, type Message, type PartitionMetadata } from 'kafkajs';
import { callPartCodec, callPartMessage, IngestConversions } from '@weft/ingest';
import { createLogger } from '@weft/core';
import { insertCallParts, migrate, openStore, type CallPartRow } from '@weft/store';
import { defaultRequestLimits } from '@weft/http';
import { callItems, sampleRows, UpsertBatchTemplate } from './sample-calls';
import { rateOnIngestWorkers, rateOnThisThread, type Rate } from './worker-rates';
import {
  basicAuth,
  HARNESS_API_KEY,
  KeepAlivePoster,
  type KafkaBroker,
  memoryOf,
  metricSeries,
  metricValue,
  processCpuMicros,
  REPO_ROOT,
  type RunningWeft,
  startKafkaBroker,
  startWeft,
  threadCpuByName,
  threadCpuSince,
} from '@weft/harness';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
/** Profile the serving processes (the profiler's own thread costs ~5 CPU-µs per call: BENCH_CPU_PROFILE=0 for the bare figures). */
const CPU_PROFILE = process.env.BENCH_CPU_PROFILE !== '0';
/** How often the ack→queryable sampler asks whether its call is queryable yet (each ask is a query the server runs). */
const POLL_MS = Number(process.env.BENCH_POLL_MS ?? 10);
/** Load before the measured window, so that the figures are a warmed-up server's. */
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 5);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 8);
const PER_REQUEST = Number(process.env.BENCH_CALLS_PER_REQUEST ?? 100);
const RATE = Number(process.env.BENCH_RATE ?? 0);
const CEILING_CALLS = Number(process.env.BENCH_CEILING_CALLS ?? 50_000);
/** More node flags for the serving processes (V8 experiments: `--single-threaded-gc`, `--max-semi-space-size=64`). */
const NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
const CONVERSION_MS = Number(process.env.BENCH_CONVERSION_MS ?? 2000);
const MODES = new Set((process.env.BENCH_MODES ?? 'aio,kafka').split(',').map((m) => m.trim()));
/** Producer compression for the Kafka mode and the kafkajs ceiling alike. */
const COMPRESSION = (process.env.KAFKA_COMPRESSION ?? 'gzip') as 'gzip' | 'none';
/** Scratch space (wiped at start): BENCH_DIR, else .bench/ in the repository. */
const ROOT = process.env.BENCH_DIR ?? join(REPO_ROOT, '.bench');
const PROFILE_DIR = join(ROOT, 'profiles');

interface LoadResult {
  calls: number;
  seconds: number;
  callsPerSecond: number;
  rejected: number;
  delayP50: number;
  delayP99: number;
  gatewayPeakRssMiB: number;
  /** CPU time (user + system, all threads: the embedded engine included) per server process, µs. */
  cpuMicros: number[];
  /** ...of which the first process's main (JavaScript) thread; the rest is the engine's and libuv's threads. */
  mainThreadCpuMicros: number;
  /** ...and by thread name (a thread that ended during the run is not counted here). */
  threadCpuMicros: Record<string, number>;
  /** The second process's (the Kafka writer's) by thread name, when there is one. */
  secondThreadCpuMicros: Record<string, number> | null;
  /** The load generator's own CPU time, µs (it shares the cores). */
  driverCpuMicros: number;
  /** The load generator's CPU by thread name (this process: its JavaScript, GC helpers, and any engine threads left from the ceiling). */
  driverThreadCpuMicros: Record<string, number>;
}

/** CPU-µs per call by thread name, busiest first (threads under 0.5 µs left out). */
const perCallByThread = (micros: Record<string, number>, calls: number) =>
  Object.fromEntries(
    Object.entries(micros)
      .map(([name, m]) => [name, +(m / calls).toFixed(1)] as const)
      .filter(([, perCall]) => perCall >= 0.5)
      .sort((a, b) => b[1] - a[1]),
  );

const pct = (xs: number[], p: number) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

/** Peak resident set of a process (VmHWM), in MiB. */
const peakRssMiB = (pid: number): number => Math.round(memoryOf(pid).peakRssMiB);

/**
 * Posts from CLIENTS concurrent clients for SECONDS; samples ack→queryable on the side, and the
 * CPU time the server processes (`cpuPids`, the first one serving the posts) used meanwhile.
 */
async function drive(label: string, gatewayUrl: string, queryUrl: string, cpuPids: number[]): Promise<LoadResult> {
  const gatewayPid = cpuPids[0]!;
  // node:http with kept-alive connections: the load generator shares the cores (see KeepAlivePoster).
  const headers = { 'content-type': 'application/json', authorization: basicAuth(HARNESS_API_KEY) };
  const api = new KeepAlivePoster(gatewayUrl, headers);
  const query = new KeepAlivePoster(queryUrl, headers);
  const project = `acme/bench-${label}`;
  let acked = 0;
  let rejected = 0;
  let lastAcked: { id: string; at: number } | null = null;
  const delays: number[] = [];

  // One body made once, refilled with fresh ids per request in each client's copy: the load generator shares the 2 cores, keep it cheap.
  const template = new UpsertBatchTemplate(project, PER_REQUEST);
  let deadline = Date.now() + WARMUP_SECONDS * 1000;
  let phase = 'warm';
  // Paced (BENCH_RATE): request r of client c is due at r×CLIENTS + c request intervals after the phase starts.
  const interval = RATE > 0 ? (PER_REQUEST * 1000) / RATE : 0;
  let phaseStart = performance.now();
  const client = async (c: number) => {
    const body = template.newBody();
    for (let r = 0; Date.now() < deadline; r++) {
      const wait = phaseStart + (r * CLIENTS + c) * interval - performance.now();
      if (wait > 0) await new Promise((ok) => setTimeout(ok, wait));
      if (Date.now() >= deadline) break;
      // Unique per mode, phase, client and request; fill() appends the call's index.
      const lastId = template.fill(body, `${label}-${phase}-${c}-${r}-`);
      const res = await api.post('/call/upsert_batch', body);
      if (res.status === 200) {
        acked += template.calls;
        lastAcked = { id: lastId, at: performance.now() };
      } else {
        rejected += template.calls;
        await new Promise((ok) => setTimeout(ok, 100));
      }
    }
  };
  // The delay sampler: the newest acknowledged call, polled until a query sees it.
  const sampleOne = async (sample: { id: string; at: number }) => {
    for (;;) {
      const r = await query.post('/calls/query_stats', JSON.stringify({ project_id: project, filter: { call_ids: [sample.id] } }));
      if (r.status === 200 && (JSON.parse(r.text) as { count: number }).count === 1) break;
      if (performance.now() - sample.at > 60_000) throw new Error(`${sample.id} not queryable after 60 s`);
      await new Promise((ok) => setTimeout(ok, POLL_MS));
    }
    delays.push(performance.now() - sample.at);
  };
  const sampler = async () => {
    while (Date.now() < deadline) {
      const sample = lastAcked as { id: string; at: number } | null;
      if (!sample) {
        await new Promise((ok) => setTimeout(ok, 20));
        continue;
      }
      await sampleOne(sample);
      await new Promise((ok) => setTimeout(ok, 100));
    }
  };
  // Warm-up: the same load, not measured (a fresh process compiles its hot code on helper threads
  // for seconds; a server that has run for a while does not).
  await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
  acked = 0;
  rejected = 0;
  lastAcked = null;
  phase = 'run';
  deadline = Date.now() + SECONDS * 1000;
  phaseStart = performance.now();
  const started = performance.now();
  const cpuAtStart = cpuPids.map((pid) => processCpuMicros(pid));
  const threadsAtStart = threadCpuByName(gatewayPid);
  const secondPid = cpuPids[1];
  const secondThreadsAtStart = secondPid ? threadCpuByName(secondPid) : null;
  const driverAtStart = process.cpuUsage();
  const driverThreadsAtStart = threadCpuByName(process.pid);
  await Promise.all([...Array.from({ length: CLIENTS }, (_, c) => client(c)), sampler()]);
  const seconds = (performance.now() - started) / 1000;
  const driver = process.cpuUsage(driverAtStart);
  const driverThreadCpuMicros = threadCpuSince(process.pid, driverThreadsAtStart);
  const cpuMicros = cpuPids.map((pid, i) => processCpuMicros(pid) - cpuAtStart[i]!);
  const threadCpuMicros = threadCpuSince(gatewayPid, threadsAtStart, cpuMicros[0]);
  const mainThreadCpuMicros = threadCpuMicros.main!;
  const secondThreadCpuMicros = secondPid && secondThreadsAtStart ? threadCpuSince(secondPid, secondThreadsAtStart) : null;
  // A short run on a busy machine may end before the first sample: take one, after the clock.
  const last = lastAcked as { id: string; at: number } | null;
  if (delays.length === 0 && last) await sampleOne(last);
  api.close();
  query.close();
  return {
    cpuMicros,
    mainThreadCpuMicros,
    threadCpuMicros,
    secondThreadCpuMicros,
    driverCpuMicros: driver.user + driver.system,
    driverThreadCpuMicros,
    calls: acked,
    seconds,
    callsPerSecond: acked / seconds,
    rejected,
    delayP50: pct(delays, 50),
    delayP99: pct(delays, 99),
    gatewayPeakRssMiB: peakRssMiB(gatewayPid),
  };
}

/** Where the time went, from the services' own /metrics: insert sizes and time spent inserting. */
async function pipelineMetrics(writerUrl: string, gatewayUrl: string, seconds: number): Promise<Record<string, number>> {
  const m = (url: string, name: string) => metricValue(url, name);
  const inserts = await m(writerUrl, 'weft_writer_batch_rows_count');
  const rows = await m(writerUrl, 'weft_writer_batch_rows_sum');
  const insertSeconds = await m(writerUrl, 'weft_writer_insert_latency_seconds_sum');
  const publishes = await m(gatewayUrl, 'weft_producer_latency_seconds_count');
  const publishSeconds = await m(gatewayUrl, 'weft_producer_latency_seconds_sum');
  return {
    inserts,
    rowsPerInsert: Math.round(rows / inserts),
    msPerInsert: +((1000 * insertSeconds) / inserts).toFixed(1),
    insertRowsPerSecWhileInserting: Math.round(rows / insertSeconds),
    shareOfWallTimeInserting: +(insertSeconds / seconds).toFixed(2),
    publishAckMsMean: +((1000 * publishSeconds) / publishes).toFixed(1),
  };
}

/**
 * The serving process's garbage-collection pauses per call, in µs by kind (minor = scavenges of
 * the young generation, major = mark-compact, incremental = marking steps on the main thread):
 * prom-client's default metric, counted since the process started.
 */
async function gcPauseMicrosPerCall(url: string, calls: number): Promise<Record<string, number>> {
  const series = await metricSeries(url, 'weft_process_nodejs_gc_duration_seconds_sum');
  return Object.fromEntries(series.map((s) => [s.labels.kind ?? '?', +((s.value * 1e6) / calls).toFixed(1)]));
}

/** Ceiling 1: direct inserts into (embedded) ClickHouse, in batches of `batch` rows, in this process. */
async function clickHouseCeiling(
  rows: CallPartRow[],
  batch: number,
  format: 'RowBinary' | 'JSONEachRow' = 'RowBinary',
): Promise<{ rowsPerSec: number; cpuMicrosPerRow: number }> {
  const dir = join(ROOT, `ceiling-store-${format}-${batch}`);
  rmSync(dir, { recursive: true, force: true });
  const store = openStore({ dataDir: dir });
  await migrate(store.client);
  const started = performance.now();
  const cpu = process.cpuUsage();
  for (let i = 0; i < rows.length; i += batch) {
    const chunk = rows.slice(i, i + batch);
    // JSONEachRow through the client: the path the services took before TabSeparated and RowBinary (for comparison).
    if (format === 'JSONEachRow') await store.client.insert({ table: 'call_parts', values: chunk, format });
    else await insertCallParts(store, chunk); // RowBinary, as the services insert
  }
  const rate = rows.length / ((performance.now() - started) / 1000);
  const used = process.cpuUsage(cpu);
  await store.close();
  // process.cpuUsage counts every thread of this process: the embedded engine's included.
  return { rowsPerSec: rate, cpuMicrosPerRow: (used.user + used.system) / rows.length };
}

/**
 * Ceiling 2: direct kafkajs produces of the same parts in the format the gateway ships (acks all,
 * same compression): 2k parts per request, 4 in parallel, each request's parts for one
 * partition joined in one record (envelope version 4). Parts per second.
 */
async function kafkaCeiling(brokers: string, rows: CallPartRow[]): Promise<number> {
  const kafka = new Kafka({ clientId: 'bench', brokers: [brokers], logLevel: logLevel.NOTHING });
  const topic = `bench-ceiling-${Date.now()}`;
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ waitForLeaders: false, topics: [{ topic, numPartitions: 6, replicationFactor: 1 }] });
  // Wait for every partition's leader ourselves: kafkajs's waitForLeaders gives up with "does not
  // host this topic-partition" when a busy broker's metadata lags the creation.
  for (let attempt = 0; ; attempt++) {
    const ready = await admin
      .fetchTopicMetadata({ topics: [topic] })
      .then(({ topics }) => topics[0]?.partitions.length === 6 && topics[0].partitions.every((p) => p.leader >= 0))
      .catch(() => false);
    if (ready) break;
    if (attempt >= 60) throw new Error(`${topic}: partitions without a leader after 30 s`);
    await new Promise((r) => setTimeout(r, 500));
  }
  await admin.disconnect();
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  const partitioner = Partitioners.DefaultPartitioner();
  const partitionMetadata = Array.from({ length: 6 }, (_, partitionId) => ({ partitionId, leader: 0 }) as PartitionMetadata);
  const started = performance.now();
  const requests: Message[][] = [];
  for (let i = 0; i < rows.length; i += 2000) {
    const byPartition = new Map<number, ReturnType<typeof callPartMessage>[]>();
    for (const m of rows.slice(i, i + 2000).map(callPartMessage)) {
      const partition = partitioner({ topic, partitionMetadata, message: { key: m.key, value: null } });
      byPartition.set(partition, [...(byPartition.get(partition) ?? []), m]);
    }
    requests.push(
      [...byPartition].map(([partition, ms]) => ({ key: ms[0]!.key, partition, value: callPartCodec.encodeMany!(ms.map((m) => m.value)) })),
    );
  }
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < requests.length)
        await producer.send({
          topic,
          acks: -1,
          compression: COMPRESSION === 'gzip' ? CompressionTypes.GZIP : CompressionTypes.None,
          messages: requests[next++]!,
        });
    }),
  );
  const rate = rows.length / ((performance.now() - started) / 1000);
  await producer.disconnect();
  return rate;
}

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number }[];
}
const busySamples = (p: CpuProfile) => p.nodes.reduce((n, x) => n + (x.callFrame.functionName === '(idle)' ? 0 : (x.hitCount ?? 0)), 0);

/**
 * Top self-time functions of a process's main thread (the busiest of the profiles it wrote:
 * tsx's module loader thread writes one too). Includes start-up, so run long enough.
 */
function profileSummary(dir: string, top = 15): string[] {
  const profiles = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as CpuProfile);
  if (profiles.length === 0) return ['(no profile written)'];
  const prof = profiles.reduce((a, b) => (busySamples(b) > busySamples(a) ? b : a));
  const self = new Map<string, number>();
  let total = 0;
  for (const n of prof.nodes) {
    const hits = n.hitCount ?? 0;
    total += hits;
    const where = n.callFrame.url
      .replace(/^.*node_modules\//, '')
      .replace(/^file:\/\/.*\/weft\//, '')
      .replace(REPO_ROOT + '/', '');
    const key = `${n.callFrame.functionName || '(anonymous)'} ${where ? `${where}:${n.callFrame.lineNumber + 1}` : ''}`.trim();
    self.set(key, (self.get(key) ?? 0) + hits);
  }
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([k, v]) => `${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`);
}

/**
 * What the gateway's JavaScript does with one request's body before its publish (parse, the
 * edge's checks, rows, RowBinary: IngestConversions.convertCallBatch), in calls per second: on this thread, and on
 * the ingest worker threads, one and two (how it scales with threads on this machine).
 */
async function conversionRates(): Promise<Record<string, Rate>> {
  const template = new UpsertBatchTemplate('acme/bench', PER_REQUEST);
  const body = template.newBody();
  template.fill(body, 'conv-');
  const task = {
    body,
    caller: { userId: 'bench', keyId: 'bench', isAdmin: true, entities: [] },
    acceptedAtMicros: 1_700_000_000_000_000,
    limits: defaultRequestLimits,
  };
  // The conversions as the gateway's serving thread holds them (their encoder kept across requests).
  const here = new IngestConversions();
  return {
    upsert_batch_to_insert_bytes: rateOnThisThread(CONVERSION_MS, PER_REQUEST, () => void here.convertCallBatch(task)),
    ...(await rateOnIngestWorkers('upsert_batch_to_insert_bytes', CONVERSION_MS, PER_REQUEST, (workers) =>
      workers.run('convertCallBatch', task),
    )),
  };
}

async function main(): Promise<void> {
  rmSync(ROOT, { recursive: true, force: true });
  mkdirSync(PROFILE_DIR, { recursive: true });
  const log = createLogger('warn');
  let broker: KafkaBroker | null = null;
  const brokers = !MODES.has('kafka') ? '' : (process.env.KAFKA_BROKERS ?? (broker = await startKafkaBroker(join(ROOT, 'kafka'))).brokers);
  // info: the helpers wait for the 'listening' line; one log line per request is part of the real cost.
  const quiet = { LOG_LEVEL: 'info' };
  const report: Record<string, unknown> = {
    compression: COMPRESSION,
    clients: CLIENTS,
    callsPerRequest: PER_REQUEST,
    offeredCallsPerSec: RATE > 0 ? RATE : null,
    seconds: SECONDS,
    machineCores: cpus().length,
    loadAverageAtStart: +loadavg()[0]!.toFixed(1),
  };
  const running: RunningWeft[] = [];
  try {
    const rows = sampleRows(CEILING_CALLS);
    // Rows (parts) per call as the services write them: one when a call's start and end come together.
    const rowsPerCall = rows.length / CEILING_CALLS;
    const bytesPerCall = JSON.stringify(callItems('acme/bench', 'x'.repeat(36), 1)).length;
    report.bytesPerCallJson = bytesPerCall;
    const chBig = await clickHouseCeiling(rows, 10_000);
    const chCalls = chBig.rowsPerSec / rowsPerCall;
    // The same at the batch size the services reach under this load (to show what batching buys).
    const chRowsSmall = await clickHouseCeiling(rows.slice(0, Math.round(rows.length * 0.4)), 1_000);
    const chJson = await clickHouseCeiling(rows, 10_000, 'JSONEachRow');
    const kafkaCalls = MODES.has('kafka') ? (await kafkaCeiling(brokers, rows)) / rowsPerCall : NaN;
    report.ceilings = {
      rowsPerCall,
      clickhouseCallsPerSec: Math.round(chCalls),
      clickhouseCpuMicrosPerCall: Math.round(rowsPerCall * chBig.cpuMicrosPerRow),
      clickhouseCallsPerSecIn1kRowBatches: Math.round(chRowsSmall.rowsPerSec / rowsPerCall),
      clickhouseCpuMicrosPerCallIn1kRowBatches: Math.round(rowsPerCall * chRowsSmall.cpuMicrosPerRow),
      clickhouseJsonEachRowCallsPerSec: Math.round(chJson.rowsPerSec / rowsPerCall),
      clickhouseJsonEachRowCpuMicrosPerCall: Math.round(rowsPerCall * chJson.cpuMicrosPerRow),
      kafkaCallsPerSec: Math.round(kafkaCalls),
    };
    log.warn(report, 'ceilings');
    report.conversion = await conversionRates();

    const profiled = (name: string) => [...(CPU_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${join(PROFILE_DIR, name)}`] : []), ...NODE_ARGS];
    let aioResult: LoadResult | null = null;
    let aioMetrics: Record<string, number> = {};
    let aioGc: Record<string, number> = {};
    if (MODES.has('aio')) {
      const aio = await startWeft({ dataDir: join(ROOT, 'aio'), env: quiet, nodeArgs: profiled('all-in-one') });
      running.push(aio);
      aioResult = await drive('aio', aio.url, aio.url, [aio.proc.pid!]);
      aioMetrics = await pipelineMetrics(aio.url, aio.url, aioResult.seconds);
      aioGc = await gcPauseMicrosPerCall(aio.url, aioResult.calls);
      await aio.stop();
    }

    let kafkaResult: LoadResult | null = null;
    let kafkaMetrics: Record<string, number> = {};
    let kafkaGc: Record<string, Record<string, number>> = {};
    let writerPeakRssMiB = NaN;
    let brokerPid: number | undefined;
    if (MODES.has('kafka')) {
      const p = {
        ...quiet,
        WEFT_BUS: 'kafka',
        KAFKA_BROKERS: brokers,
        KAFKA_TOPIC_PREFIX: `bench-${Date.now()}.`,
        KAFKA_TOPIC_PARTITIONS: '6',
        KAFKA_COMPRESSION: COMPRESSION,
      };
      const gateway = await startWeft({
        entry: 'services/gateway/src/main.ts',
        dataDir: join(ROOT, 'gw'),
        env: p,
        nodeArgs: profiled('gateway'),
      });
      const writer = await startWeft({
        dataDir: join(ROOT, 'writer'),
        env: { ...p, WEFT_ROLES: 'writer,query' },
        nodeArgs: profiled('writer'),
      });
      running.push(gateway, writer);
      brokerPid = broker?.pid();
      kafkaResult = await drive('kafka', gateway.url, writer.url, [gateway.proc.pid!, writer.proc.pid!, ...(brokerPid ? [brokerPid] : [])]);
      kafkaMetrics = await pipelineMetrics(writer.url, gateway.url, kafkaResult.seconds);
      kafkaGc = {
        gateway: await gcPauseMicrosPerCall(gateway.url, kafkaResult.calls),
        writer: await gcPauseMicrosPerCall(writer.url, kafkaResult.calls),
      };
      writerPeakRssMiB = peakRssMiB(writer.proc.pid!);
      await gateway.stop();
      await writer.stop();
    }

    const fmt = (r: LoadResult) => ({
      callsPerSec: Math.round(r.callsPerSecond),
      acknowledgedCalls: r.calls,
      rejectedCalls: r.rejected,
      ackToQueryableMs: { p50: Math.round(r.delayP50), p99: Math.round(r.delayP99) },
      gatewayPeakRssMiB: r.gatewayPeakRssMiB,
      // Whole-process CPU per acknowledged call: on a shared 2-core machine the steadier figure.
      cpuMicrosPerCall: Math.round(r.cpuMicros.reduce((a, b) => a + b, 0) / r.calls),
      // Of the serving process: its JavaScript thread, and every other thread (the embedded
      // engine's inserts and merges, libuv, GC helpers).
      cpuMicrosPerCallServingProcess: {
        mainThread: Math.round(r.mainThreadCpuMicros / r.calls),
        otherThreads: Math.round((r.cpuMicros[0]! - r.mainThreadCpuMicros) / r.calls),
        byThreadName: perCallByThread(r.threadCpuMicros, r.calls),
      },
      driverCpuMicrosPerCall: Math.round(r.driverCpuMicros / r.calls),
      driverCpuMicrosPerCallByThreadName: perCallByThread(r.driverThreadCpuMicros, r.calls),
    });
    if (aioResult)
      report.allInOne = {
        ...fmt(aioResult),
        ofDirectInsertCeiling: +(aioResult.callsPerSecond / chCalls).toFixed(2),
        timing: aioMetrics,
        gcPauseMicrosPerCall: aioGc,
      };
    if (kafkaResult)
      report.kafka = {
        ...fmt(kafkaResult),
        ofLowerCeiling: +(kafkaResult.callsPerSecond / Math.min(chCalls, kafkaCalls)).toFixed(2),
        writerPeakRssMiB,
        cpuMicrosPerCallByProcess: {
          gateway: Math.round(kafkaResult.cpuMicros[0]! / kafkaResult.calls),
          writer: Math.round(kafkaResult.cpuMicros[1]! / kafkaResult.calls),
          writerByThreadName: perCallByThread(kafkaResult.secondThreadCpuMicros ?? {}, kafkaResult.calls),
          broker: brokerPid ? Math.round(kafkaResult.cpuMicros[2]! / kafkaResult.calls) : 'not measured (KAFKA_BROKERS given)',
        },
        timing: kafkaMetrics,
        gcPauseMicrosPerCall: kafkaGc,
      };
    report.loadAverageAtEnd = +loadavg()[0]!.toFixed(1);
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    if (CPU_PROFILE)
      for (const name of [...(aioResult ? ['all-in-one'] : []), ...(kafkaResult ? ['gateway', 'writer'] : [])]) {
        process.stdout.write(`\nCPU profile, ${name} (self time, top functions):\n${profileSummary(join(PROFILE_DIR, name)).join('\n')}\n`);
      }
  } finally {
    await Promise.all(running.map((w) => w.kill()));
    await broker?.stop();
  }
}

main().catch((e) => {
  process.stderr.write(`${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
