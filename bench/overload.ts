/**
 * Overload benchmark (`npm run bench:overload`): what the service keeps doing when clients
 * outnumber what it can take, in both modes (all-in-one; gateway → Kafka → writer+query).
 *
 * Per mode, one after the other against the same processes: 8 polite clients (they honour
 * Retry-After), 64 and 128 aggressive clients (they retry 50 ms after any 503), 64 polite
 * clients. Bodies are /call/upsert_batch of BENCH_BODY_CALLS calls of ~BENCH_CALL_BYTES
 * (~470 KB, as in the fault-injection run that found the collapse), with
 * WEFT_BUS_MAX_PENDING_BYTES = BENCH_MAX_PENDING_BYTES (8 MiB, as in that run). Reports
 * acknowledged calls/s and its ratio to the 8-client figure, refusals, how fast refusals and
 * acknowledgements arrive (p50/p99), server CPU per acknowledged call, how many refused calls
 * were stored anyway (must be 0), and peak RSS. Then the all-in-one with the default limits
 * under 200 aggressive clients × 1 MB bodies: peak RSS against the documented 1 GiB.
 *
 * Env: BENCH_SECONDS (10 per scenario), BENCH_BODY_CALLS (200), BENCH_CALL_BYTES (2400),
 * BENCH_MAX_PENDING_BYTES (8388608), BENCH_RSS_SECONDS (15), BENCH_RSS_BODY_CALLS (400 ≈ 1 MB), BENCH_DIR (scratch, default
 * .bench/overload), KAFKA_BROKERS (else a broker is started from the Maven jars).
 */
import { mkdirSync, rmSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import {
  Client,
  memoryOf,
  percentile,
  processCpuMicros,
  REPO_ROOT,
  runLoad,
  startKafkaBroker,
  startWeft,
  type KafkaBroker,
  type LoadOutcome,
  type RunningWeft,
} from '@weft/harness';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const BODY_CALLS = Number(process.env.BENCH_BODY_CALLS ?? 200);
const CALL_BYTES = Number(process.env.BENCH_CALL_BYTES ?? 2400);
const MAX_PENDING_BYTES = process.env.BENCH_MAX_PENDING_BYTES ?? String(8 * 1024 * 1024);
const RSS_SECONDS = Number(process.env.BENCH_RSS_SECONDS ?? 15);
const RSS_BODY_CALLS = Number(process.env.BENCH_RSS_BODY_CALLS ?? 400);
const ROOT = process.env.BENCH_DIR ?? join(REPO_ROOT, '.bench', 'overload');

const SCENARIOS = [
  { name: '8 polite', clients: 8, behaviour: 'polite' as const },
  { name: '64 aggressive', clients: 64, behaviour: 'aggressive' as const },
  { name: '128 aggressive', clients: 128, behaviour: 'aggressive' as const },
  { name: '64 polite', clients: 64, behaviour: 'polite' as const },
];

interface ScenarioResult {
  scenario: string;
  ackedCallsPerSec: number;
  ratioTo8: number;
  attempts: number;
  refusals: number;
  refusalMs: { p50: number; p99: number };
  ackMs: { p50: number; p99: number };
  serverCpuMicrosPerAckedCall: number;
  errors: Record<string, number>;
  refusalReasons: Record<string, number>;
}

const round = (x: number, digits = 0) => Number(x.toFixed(digits));

async function queriedIds(url: string, project: string): Promise<Set<string>> {
  const r = await new Client(url).post('/calls/stream_query', { project_id: project, columns: ['id'] });
  if (r.status !== 200) throw new Error(`stream_query → ${r.status}`);
  return new Set(
    r.text
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { id: string }).id),
  );
}

/** Runs the scenarios against one write URL; checks the store through `readUrl` at the end. */
async function runMode(writeUrl: string, readUrl: string, cpuPids: number[]) {
  const project = `acme/overload-${randomUUID().slice(0, 6)}`;
  const results: ScenarioResult[] = [];
  const outcomes: LoadOutcome[] = [];
  let base = NaN;
  for (const s of SCENARIOS) {
    const cpuBefore = cpuPids.reduce((n, pid) => n + processCpuMicros(pid), 0);
    const r = await runLoad({
      url: writeUrl,
      project,
      clients: s.clients,
      seconds: SECONDS,
      callsPerRequest: BODY_CALLS,
      callBytes: CALL_BYTES,
      behaviour: s.behaviour,
      retryDelayMs: 50,
    });
    const cpu = cpuPids.reduce((n, pid) => n + processCpuMicros(pid), 0) - cpuBefore;
    outcomes.push(r);
    const rate = r.ackedCalls / r.seconds;
    if (s.clients === 8) base = rate;
    results.push({
      scenario: s.name,
      ackedCallsPerSec: round(rate),
      ratioTo8: round(rate / base, 2),
      attempts: r.attempts,
      refusals: r.refusals,
      refusalMs: { p50: round(percentile(r.refusalMs, 50)), p99: round(percentile(r.refusalMs, 99)) },
      ackMs: { p50: round(percentile(r.ackMs, 50)), p99: round(percentile(r.ackMs, 99)) },
      serverCpuMicrosPerAckedCall: r.ackedCalls ? round(cpu / r.ackedCalls) : NaN,
      errors: Object.fromEntries(r.errors),
      refusalReasons: Object.fromEntries(r.refusalReasons),
    });
    process.stderr.write(`[overload] ${s.name}: ${round(rate)} calls/s, ${r.refusals} refusals\n`);
  }
  // Everything acknowledged is stored, nothing refused is.
  const acked = outcomes.flatMap((o) => o.ackedIds);
  const deadline = Date.now() + 180_000;
  let stored = await queriedIds(readUrl, project);
  while (!acked.every((id) => stored.has(id)) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 1_000));
    stored = await queriedIds(readUrl, project);
  }
  const ackedMissing = acked.filter((id) => !stored.has(id)).length;
  const refusedStored = outcomes.flatMap((o) => o.refusedIds).filter((id) => stored.has(id)).length;
  const peakRssMiB = cpuPids.map((pid) => round(memoryOf(pid).peakRssMiB));
  return { results, ackedMissing, refusedStored, peakRssMiB };
}

async function main(): Promise<void> {
  rmSync(ROOT, { recursive: true, force: true });
  mkdirSync(ROOT, { recursive: true });
  const running: RunningWeft[] = [];
  let broker: KafkaBroker | null = null;
  const tight = { WEFT_BUS_MAX_PENDING_BYTES: MAX_PENDING_BYTES, LOG_LEVEL: 'info' };
  try {
    const aio = await startWeft({ dataDir: join(ROOT, 'aio'), env: tight });
    running.push(aio);
    const allInOne = await runMode(aio.url, aio.url, [aio.proc.pid!]);
    await aio.kill();

    const brokers = process.env.KAFKA_BROKERS ?? (broker = await startKafkaBroker(join(ROOT, 'kafka'))).brokers;
    const prefix = `bench-overload-${randomUUID().slice(0, 6)}.`;
    const k = {
      ...tight,
      WEFT_BUS: 'kafka',
      KAFKA_BROKERS: brokers,
      KAFKA_TOPIC_PREFIX: prefix,
      KAFKA_GROUP_ID: `${prefix}writers`,
      KAFKA_TOPIC_PARTITIONS: '4',
    };
    const gateway = await startWeft({ entry: 'services/gateway/src/main.ts', dataDir: join(ROOT, 'gw'), env: k });
    running.push(gateway);
    const writer = await startWeft({ dataDir: join(ROOT, 'writer'), env: { ...k, WEFT_ROLES: 'writer,query' } });
    running.push(writer);
    const kafka = await runMode(gateway.url, writer.url, [gateway.proc.pid!]);
    await Promise.all([gateway.kill(), writer.kill()]);

    // Memory with the default limits: 200 clients × ~1 MB bodies, retrying every 50 ms.
    const rssServer = await startWeft({ dataDir: join(ROOT, 'rss'), env: { LOG_LEVEL: 'info' } });
    running.push(rssServer);
    const idleRss = memoryOf(rssServer.proc.pid!).rssMiB;
    const rss = await runLoad({
      url: rssServer.url,
      project: 'acme/overload-rss',
      clients: 200,
      seconds: RSS_SECONDS,
      callsPerRequest: RSS_BODY_CALLS,
      callBytes: 2500,
      behaviour: 'aggressive',
      retryDelayMs: 50,
    });
    const memory = {
      bodyKiB: round(rss.bodyBytes / 1024),
      idleRssMiB: round(idleRss),
      peakRssMiB: round(memoryOf(rssServer.proc.pid!).peakRssMiB),
      documentedBoundMiB: 1024,
      ackedCallsPerSec: round(rss.ackedCalls / rss.seconds),
      refusals: rss.refusals,
      errors: Object.fromEntries(rss.errors),
    };
    await rssServer.kill();

    const report = {
      machine: {
        cores: cpus().length,
        loadAverage1m: round(loadavg()[0]!, 1),
        note: 'shared with other jobs; load generator on the same host',
      },
      settings: {
        secondsPerScenario: SECONDS,
        callsPerBody: BODY_CALLS,
        callBytes: CALL_BYTES,
        busMaxPendingBytes: Number(MAX_PENDING_BYTES),
        retryDelayMsAggressive: 50,
      },
      allInOne,
      kafka,
      memory,
    };
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    process.stdout.write(
      '\n| scenario | mode | calls/s acked | × 8-client | refusals | refusal p50 / p99 ms | ack p50 / p99 ms | server CPU µs / call |\n|---|---|---|---|---|---|---|---|\n',
    );
    for (const [mode, m] of [
      ['all-in-one', allInOne],
      ['Kafka', kafka],
    ] as const) {
      for (const r of m.results) {
        process.stdout.write(
          `| ${r.scenario} | ${mode} | ${r.ackedCallsPerSec} | ${r.ratioTo8} | ${r.refusals} | ${r.refusalMs.p50} / ${r.refusalMs.p99} | ${r.ackMs.p50} / ${r.ackMs.p99} | ${r.serverCpuMicrosPerAckedCall} |\n`,
        );
      }
    }
    process.stdout.write(
      `\nrefused but stored: all-in-one ${allInOne.refusedStored}, Kafka ${kafka.refusedStored}; acknowledged but missing: ${allInOne.ackedMissing}, ${kafka.ackedMissing}\n`,
    );
    process.stdout.write(
      `memory: 200 × ${memory.bodyKiB} KiB, peak RSS ${memory.peakRssMiB} MiB (idle ${memory.idleRssMiB} MiB; bound ${memory.documentedBoundMiB} MiB)\n`,
    );
    if (allInOne.refusedStored + kafka.refusedStored + allInOne.ackedMissing + kafka.ackedMissing > 0) process.exitCode = 1;
  } finally {
    await Promise.all(running.map((w) => w.kill()));
    await broker?.stop();
  }
}

await main();
