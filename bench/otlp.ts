/**
 * OTLP ingestion throughput: spans per second the gateway acknowledges (durable on the bus),
 * for OTLP/JSON, OTLP/protobuf and OTLP/gRPC, on the all-in-one server (embedded ClickHouse, in-process
 * bus); plus the pure conversion rate, to show conversion is not the bottleneck.
 *
 *   npm run bench:otlp                       # defaults
 *   BENCH_SECONDS=20 BENCH_CONCURRENCY=8 BENCH_BATCH=512 npm run bench:otlp
 *   BENCH_WARMUP_SECONDS=0 npm run bench:otlp   # no unmeasured load before each encoding (default 3 s)
 *   BENCH_ENV='WEFT_BUS=kafka KAFKA_BROKERS=localhost:9092' npm run bench:otlp   # any server env
 *   BENCH_URL=http://127.0.0.1:6345 BENCH_API_KEY=… npm run bench:otlp   # a server already running
 *   BENCH_KAFKA=1 npm run bench:otlp   # also the distributed mode: gateway → Kafka → writer
 *                                      # (a test broker from Maven jars, or KAFKA_BROKERS=…)
 *   BENCH_CONVERSION_ONLY=1 npm run bench:otlp   # only the in-process conversion rates (no server)
 *   BENCH_KINDS=protobuf BENCH_PROFILE=/tmp/prof npm run bench:otlp   # one encoding, the server under
 *                                      # `node --cpu-prof` (profiles written to that folder on stop)
 *
 * The span mix is a GenAI agent (bench/otlp-span-mix.ts); the batch size defaults to the JS SDK's
 * BatchSpanProcessor maxExportBatchSize (512).
 */
import { Client as GrpcClient, credentials, Metadata } from '@grpc/grpc-js';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { convertExportRequest, decodeExportTraceServiceRequest, encodeExportTraceServiceRequest, parseOtlpJson } from '@weft/otlp';
import { IngestConversions, workerSpanConverter } from '@weft/ingest';
import { rateOnIngestWorkers, rateOnThisThread, type Rate } from './worker-rates';
import { exportRequest, madeIds } from './otlp-span-mix';
import {
  basicAuth,
  HARNESS_API_KEY,
  type KafkaBroker,
  KeepAlivePoster,
  newDataDir,
  startKafkaBroker,
  startWeft,
  TEST_ROOT,
  processCpuMicros,
  threadCpuByName,
  threadCpuSince,
} from '@weft/harness';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
/** Load before each measured window (not measured), so that the figures are a warmed-up server's. */
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const BATCH = Number(process.env.BENCH_BATCH ?? 512);
/** How long each pure-conversion rate is measured. */
const CONVERSION_MS = Number(process.env.BENCH_CONVERSION_MS ?? 2000);
const EXTRA_ENV = Object.fromEntries(
  (process.env.BENCH_ENV ?? '')
    .split(/\s+/)
    .filter(Boolean)
    .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
);
/** Which encodings to drive (default: all the deployment serves). */
const KINDS = process.env.BENCH_KINDS ? new Set(process.env.BENCH_KINDS.split(',').map((k) => k.trim())) : null;
/** A folder for CPU profiles of the servers (`node --cpu-prof`), when set. */
const PROFILE_DIR = process.env.BENCH_PROFILE;
const nodeArgs = (name: string) => (PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}/${name}`] : []);
const PROJECT = 'bench/otlp';
// The admin key the harness starts servers with (a given BENCH_URL server must know it too).
const AUTH = basicAuth(process.env.BENCH_API_KEY ?? HARNESS_API_KEY);

const rate = (n: number, ms: number) => Math.round((n / ms) * 1000);

/** What the gateway converts a request's spans with, on either thread (the bench's fixed user and time). */
const SPAN_PARTS_OPTIONS = { projectId: PROJECT, runId: null, userId: 'bench', acceptedAtMicros: 1_700_000_000_000_000 };

function conversionRates(): Record<string, Rate> {
  const reqJson = exportRequest(BATCH, false);
  const text = JSON.stringify(reqJson);
  const proto = encodeExportTraceServiceRequest(exportRequest(BATCH, true));
  const measure = (f: () => void) => rateOnThisThread(CONVERSION_MS, BATCH, f);
  // The conversions as the gateway's serving thread holds them (their encoder kept across requests).
  const here = new IngestConversions();
  return {
    convert_only: measure(() => void convertExportRequest(reqJson, { projectId: PROJECT })),
    json_parse_and_convert: measure(() => void convertExportRequest(parseOtlpJson(text), { projectId: PROJECT })),
    protobuf_decode_and_convert: measure(() => void convertExportRequest(decodeExportTraceServiceRequest(proto), { projectId: PROJECT })),
    // ...and the rows the gateway builds of them, as the insert's bytes: the whole span-to-store
    // path in JavaScript, the very function the worker lines below run.
    protobuf_to_insert_bytes: measure(() => void here.convertSpans({ payload: { protobuf: proto }, opts: SPAN_PARTS_OPTIONS })),
  };
}

/** protobuf_to_insert_bytes on the gateway's ingest threads, one and two (rateOnIngestWorkers). */
function workerConversionRates(): Promise<Record<string, Rate>> {
  const protobuf = Buffer.from(encodeExportTraceServiceRequest(exportRequest(BATCH, true)));
  return rateOnIngestWorkers('protobuf_to_insert_bytes', CONVERSION_MS, BATCH, (workers) =>
    workerSpanConverter(workers).convert({ payload: { protobuf }, opts: SPAN_PARTS_OPTIONS }),
  );
}

type Kind = 'json' | 'protobuf' | 'grpc' | 'upsert_batch';

/** One request body of BATCH spans; `upsert_batch` is the same calls through /call/upsert_batch (baseline). */
function makeBody(kind: Kind): Buffer {
  if (kind === 'protobuf' || kind === 'grpc') return Buffer.from(encodeExportTraceServiceRequest(exportRequest(BATCH, true)));
  const req = exportRequest(BATCH, false);
  if (kind === 'json') return Buffer.from(JSON.stringify(req));
  const { calls } = convertExportRequest(req, { projectId: PROJECT });
  const batch = calls.flatMap((c) => [
    { mode: 'start', req: { start: c.start } },
    { mode: 'end', req: { end: c.end } },
  ]);
  return Buffer.from(JSON.stringify({ batch }));
}

/**
 * One request body made once, whose copies get fresh ids for every request (each trace
 * and span id replaced wherever it occurs, as raw bytes in protobuf, as hex text in JSON):
 * building and encoding 512 spans per request cost the load generator ~24 CPU-µs per span on
 * the two cores it shares with the server; writing the ids, well under one.
 */
class BodyTemplate {
  private readonly body: Buffer;
  private readonly hex: boolean;
  /** Per distinct id: its length in random bytes, and where it occurs in the body. */
  private readonly ids: { bytes: number; offsets: number[] }[] = [];
  private readonly randomBytes: number;

  constructor(kind: Kind) {
    madeIds.length = 0;
    this.body = makeBody(kind);
    this.hex = kind !== 'protobuf' && kind !== 'grpc';
    for (const id of madeIds) {
      const needle = this.hex ? Buffer.from(id.toString('hex'), 'latin1') : id;
      const offsets: number[] = [];
      for (let at = this.body.indexOf(needle); at >= 0; at = this.body.indexOf(needle, at + needle.length)) offsets.push(at);
      if (offsets.length > 0) this.ids.push({ bytes: id.length, offsets });
    }
    this.randomBytes = this.ids.reduce((n, id) => n + id.bytes, 0);
  }

  /** A body of the caller's own, to refill with fresh ids per request (`fill`). */
  newBody(): Buffer {
    return Buffer.from(this.body);
  }

  /**
   * Writes fresh ids into `body` (from newBody), once its last request has been answered: a
   * client refills one body rather than copying the template per request, whose fresh memory
   * kept V8's helper threads busy on the cores the server needs (docs/performance.md,
   * "Benchmark method").
   */
  fill(body: Buffer): Buffer {
    const raw = randomBytes(this.randomBytes);
    let at = 0;
    for (const { bytes, offsets } of this.ids) {
      const fresh = raw.subarray(at, (at += bytes));
      // In JSON the id is its hex text.
      const text = this.hex ? fresh.toString('hex') : null;
      for (const offset of offsets) {
        if (text === null) fresh.copy(body, offset);
        else body.write(text, offset, 'latin1');
      }
    }
    return body;
  }
}

/** One OTLP/gRPC TraceService/Export over a shared channel; rejects on any gRPC error. */
function grpcSend(client: GrpcClient, body: Buffer): Promise<void> {
  const md = new Metadata();
  md.set('authorization', AUTH);
  md.set('project_id', PROJECT);
  return new Promise((resolve, reject) =>
    client.makeUnaryRequest(
      '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
      (b: Buffer) => b,
      (b: Buffer) => b,
      body,
      md,
      (err) => (err ? reject(new Error(`gRPC ${err.code}: ${err.details}`)) : resolve()),
    ),
  );
}

async function gatewayRate(
  url: string,
  kind: Kind,
  grpcPort?: number,
  seconds = SECONDS,
): Promise<{ spansPerSec: number; requests: number; p50ms: number; p99ms: number; spans: number; seconds: number }> {
  const grpc = kind === 'grpc' ? new GrpcClient(`127.0.0.1:${grpcPort}`, credentials.createInsecure()) : null;
  // Every request writes new calls: one body with fresh ids written into each client's copy.
  const template = new BodyTemplate(kind);
  const headers = {
    project_id: PROJECT,
    authorization: AUTH,
    'content-type': kind === 'protobuf' ? 'application/x-protobuf' : 'application/json',
  };
  const path = kind === 'upsert_batch' ? '/call/upsert_batch' : '/otel/v1/traces';
  // node:http with kept-alive connections: the load generator shares the cores (see KeepAlivePoster).
  const poster = new KeepAlivePoster(url, headers);
  let spans = 0;
  const latencies: number[] = [];
  const deadline = performance.now() + seconds * 1000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      const own = template.newBody();
      while (performance.now() < deadline) {
        const body = template.fill(own);
        const t = performance.now();
        if (grpc) {
          await grpcSend(grpc, body);
        } else {
          const res = await poster.post(path, body);
          if (res.status !== 200) throw new Error(`${res.status}: ${res.text}`);
        }
        latencies.push(performance.now() - t);
        spans += BATCH;
      }
    }),
  );
  const ms = performance.now() - t0;
  grpc?.close();
  poster.close();
  latencies.sort((a, b) => a - b);
  return {
    spansPerSec: rate(spans, ms),
    requests: latencies.length,
    p50ms: Math.round(latencies[Math.floor(latencies.length * 0.5)]!),
    p99ms: Math.round(latencies[Math.floor(latencies.length * 0.99)]!),
    spans,
    seconds: ms / 1000,
  };
}

/**
 * The server's CPU per span by thread (its JavaScript thread `main`, the embedded engine's
 * insert thread `Unknown` and merges `MergeMutate`, Node's helpers `node`, threads that ended
 * during the window `ended`, the rest summed as `other`), µs, from /proc (tools/harness
 * process-cpu.ts).
 */
function cpuPerSpanByThread(since: Record<string, number>, spans: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, micros] of Object.entries(since)) {
    const key = ['main', 'Unknown', 'MergeMutate', 'node', 'ended'].includes(name) ? name : 'other';
    out[key] = (out[key] ?? 0) + micros / spans;
  }
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, Math.round(v * 10) / 10]));
}

interface Target {
  /** Where the spans are posted. */
  gatewayUrl: string;
  /** Where they are counted afterwards (/calls/query_stats). */
  queryUrl: string;
  /** The process whose CPU is counted per span (the gateway; in all-in-one, everything). */
  pid?: number;
  /** The gateway's OTLP/gRPC port, when it runs one. */
  grpcPort?: number | null;
}

/** Drives every encoding against one deployment; returns the spans acknowledged. */
async function measure(label: string, t: Target): Promise<void> {
  let total = 0;
  const kinds = (t.grpcPort ? ['json', 'protobuf', 'grpc', 'upsert_batch'] : ['json', 'protobuf', 'upsert_batch']).filter(
    (k) => !KINDS || KINDS.has(k),
  ) as Kind[];
  for (const kind of kinds) {
    // The same load first, not measured: a fresh server compiles its hot code for seconds.
    if (WARMUP_SECONDS > 0) total += (await gatewayRate(t.gatewayUrl, kind, t.grpcPort ?? undefined, WARMUP_SECONDS)).spans;
    const threads0 = t.pid ? threadCpuByName(t.pid) : null;
    const cpu0 = t.pid ? processCpuMicros(t.pid) : 0;
    const driver0 = process.cpuUsage();
    const r = await gatewayRate(t.gatewayUrl, kind, t.grpcPort ?? undefined);
    const driver = process.cpuUsage(driver0);
    // The process's own count holds the threads that ended during the window too.
    const cpu = t.pid ? (processCpuMicros(t.pid) - cpu0) / 1e6 : 0;
    const threads = t.pid && threads0 ? threadCpuSince(t.pid, threads0, cpu * 1e6) : {};
    const mainBusy = (threads.main ?? 0) / 1e6 / r.seconds;
    total += r.spans;
    const what =
      kind === 'upsert_batch'
        ? 'baseline: same calls via /call/upsert_batch'
        : kind === 'grpc'
          ? 'OTLP/gRPC via TraceService/Export'
          : `OTLP/${kind} via /otel/v1/traces`;
    // The main thread's busy share: near 1, it (not the cores) is what bounds the rate.
    const perCpu = t.pid
      ? `, ${rate(r.spans, cpu * 1000)} spans per CPU-second of the ${label === 'kafka' ? 'gateway' : 'server'}, its main thread ${Math.round(mainBusy * 100)} % busy; its CPU-µs per span by thread ${JSON.stringify(cpuPerSpanByThread(threads, r.spans))}; the load generator ${Math.round((driver.user + driver.system) / r.spans)} CPU-µs per span`
      : '';
    console.log(
      `[${label}] ${what}: ${r.spansPerSec} spans/s acknowledged (${r.requests} requests, p50 ${r.p50ms} ms, p99 ${r.p99ms} ms${perCpu})`,
    );
  }
  // Acknowledged means durable: every acknowledged span must become a call.
  const started = performance.now();
  let count = 0;
  while (performance.now() - started < 120_000) {
    const res = await fetch(`${t.queryUrl}/calls/query_stats`, {
      method: 'POST',
      headers: { authorization: AUTH, 'content-type': 'application/json' },
      body: JSON.stringify({ project_id: PROJECT }),
    });
    count = ((await res.json()) as { count: number }).count;
    if (count >= total) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  const note = process.env.BENCH_URL ? ' (an existing server: counts include earlier runs)' : '';
  console.log(`[${label}] stored calls: ${count} of ${total} acknowledged spans${count === total ? ' (all)' : ' (MISSING!)'}${note}`);
}

async function main(): Promise<void> {
  console.log(
    `OTLP bench: batch ${BATCH} spans/request, ${CONCURRENCY} in flight, ${SECONDS}s per encoding; ${cpus().length} cores, load average ${loadavg()[0]!.toFixed(1)}`,
  );
  console.log('pure conversion (one core, spans/s):', conversionRates());
  console.log('pure conversion on worker threads (spans/s):', await workerConversionRates());
  if (process.env.BENCH_CONVERSION_ONLY === '1') return;
  mkdirSync(TEST_ROOT, { recursive: true });
  if (process.env.BENCH_URL) {
    await measure('given server', { gatewayUrl: process.env.BENCH_URL, queryUrl: process.env.BENCH_URL });
    return;
  }
  // LOG_LEVEL info as in production (one line per request); startWeft also waits for 'listening'.
  const env = { LOG_LEVEL: 'info', ...EXTRA_ENV };
  const aio = await startWeft({ env, nodeArgs: nodeArgs('all-in-one') });
  try {
    await measure('all-in-one', { gatewayUrl: aio.url, queryUrl: aio.url, pid: aio.proc.pid, grpcPort: aio.grpcPort });
  } finally {
    await aio.stop();
  }
  if (process.env.BENCH_KAFKA !== '1') return;

  let broker: KafkaBroker | null = null;
  const brokers = process.env.KAFKA_BROKERS ?? (broker = await startKafkaBroker(newDataDir('otlp-bench-kafka'))).brokers;
  const kafkaEnv = {
    ...env,
    WEFT_BUS: 'kafka',
    KAFKA_BROKERS: brokers,
    KAFKA_TOPIC_PREFIX: `otlp-bench-${Date.now()}.`,
    KAFKA_TOPIC_PARTITIONS: '6',
  };
  const gateway = await startWeft({ entry: 'services/gateway/src/main.ts', env: kafkaEnv, nodeArgs: nodeArgs('gateway') });
  const writer = await startWeft({ env: { ...kafkaEnv, WEFT_ROLES: 'writer,query' }, nodeArgs: nodeArgs('writer') });
  try {
    await measure('kafka', { gatewayUrl: gateway.url, queryUrl: writer.url, pid: gateway.proc.pid, grpcPort: gateway.grpcPort });
  } finally {
    await gateway.stop();
    await writer.stop();
    await broker?.stop();
  }
}

await main();
