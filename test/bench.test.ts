import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { withEngineThreadPool } from '@weft/core';
import { REPO_ROOT } from './helpers/paths';
import { newDataDir } from './helpers/server';

/**
 * Every benchmark, run end to end in a tiny mode (a few seconds of load each), so none can rot
 * unnoticed again (a stale key once left two of them failing with 401). Figures are not judged
 * here, only that each bench runs, reports, and that what it reports is consistent.
 */
function runBench(
  file: string,
  env: Record<string, string>,
  args: string[] = [],
): Promise<{ code: number | null; out: string; err: string }> {
  const reports = newDataDir('bench-report');
  return new Promise((resolve) => {
    const proc = spawn(
      process.execPath,
      ['--report-on-signal', `--report-directory=${reports}`, '--import', 'tsx', join('bench', file), ...args],
      { cwd: REPO_ROOT, env: { ...withEngineThreadPool(process.env), ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    proc.stdout.on('data', (d) => (out += d));
    proc.stderr.on('data', (d) => (err += d));
    // Past its deadline (inside the test's), the bench writes Node's diagnostic report (its
    // JavaScript stack and what keeps its loop alive) and is killed, so a hang says where it was.
    const deadline = setTimeout(() => {
      proc.kill('SIGUSR2');
      setTimeout(() => {
        err += `\n[bench passed its ${BENCH_DEADLINE_MS / 1000} s deadline; killed]\n${hangReport(reports)}`;
        proc.kill('SIGKILL');
      }, 3000);
    }, BENCH_DEADLINE_MS);
    proc.on('exit', (code) => {
      clearTimeout(deadline);
      resolve({ code, out, err });
    });
  });
}

/** Each test's timeout is 300 s: a bench is stopped before it, with its report. */
const BENCH_DEADLINE_MS = 270_000;

/** The JavaScript stack and the live handles of a bench's diagnostic report (Node's --report-on-signal). */
function hangReport(dir: string): string {
  const file = readdirSync(dir).find((f) => f.endsWith('.json'));
  if (!file) return '(no diagnostic report written)';
  const r = JSON.parse(readFileSync(join(dir, file), 'utf8')) as {
    javascriptStack?: { message?: string; stack?: string[] };
    libuv?: { type: string; is_active: boolean; is_referenced?: boolean; remoteEndpoint?: unknown }[];
  };
  const handles = (r.libuv ?? [])
    .filter((h) => h.is_active && h.is_referenced !== false)
    .map((h) => `${h.type} ${JSON.stringify(h.remoteEndpoint ?? '')}`);
  return [`stack: ${(r.javascriptStack?.stack ?? []).join('\n  ')}`, `live handles: ${handles.join(', ')}`].join('\n');
}

const ok = (r: { code: number | null; out: string; err: string }) => {
  if (r.code !== 0) throw new Error(`bench exited with ${r.code}\n${r.out.slice(-3000)}\n${r.err.slice(-3000)}`);
};

describe('benchmarks run (tiny mode)', () => {
  it('bench:ingest reports both modes and both ceilings', async () => {
    const r = await runBench('ingest.ts', {
      KAFKA_BROKERS: inject('kafkaBrokers'),
      BENCH_DIR: newDataDir('bench-ingest'),
      BENCH_SECONDS: '2',
      BENCH_WARMUP_SECONDS: '1',
      BENCH_CLIENTS: '2',
      BENCH_CALLS_PER_REQUEST: '20',
      BENCH_CEILING_CALLS: '2000',
      BENCH_CONVERSION_MS: '200',
    });
    ok(r);
    // The report is the pretty-printed JSON document (log lines before it are one line each).
    const report = JSON.parse(r.out.slice(r.out.indexOf('\n{\n'), r.out.indexOf('\nCPU profile')));
    expect(report.ceilings.clickhouseCallsPerSec).toBeGreaterThan(0);
    // The request body's conversion on this thread and on one and two ingest workers.
    for (const where of ['', '_on_1_worker', '_on_2_workers'])
      expect(report.conversion[`upsert_batch_to_insert_bytes${where}`].per_cpu_s).toBeGreaterThan(0);
    expect(report.ceilings.kafkaCallsPerSec).toBeGreaterThan(0);
    // A call whose start and end come in one batch is one row, as the services write it.
    expect(report.ceilings.rowsPerCall).toBe(1);
    for (const mode of [report.allInOne, report.kafka]) {
      expect(mode.acknowledgedCalls).toBeGreaterThan(0);
      expect(mode.rejectedCalls).toBe(0);
      expect(mode.cpuMicrosPerCall).toBeGreaterThan(0);
      expect(mode.cpuMicrosPerCallServingProcess.mainThread).toBeGreaterThan(0);
      expect(Number.isFinite(mode.ackToQueryableMs.p99)).toBe(true);
    }
    expect(r.out).toContain('CPU profile, all-in-one');
  }, 300_000);

  it('bench:pairs alternates a base commit with this tree and prints their ratios', async () => {
    const dir = newDataDir('bench-pairs');
    const r = await runBench(
      'pairs.ts',
      {
        BENCH_PAIRS_DIR: dir,
        BENCH_DIR: newDataDir('bench-pairs-scratch'),
        BENCH_MODES: 'aio',
        BENCH_SECONDS: '2',
        BENCH_WARMUP_SECONDS: '1',
        BENCH_CLIENTS: '2',
        BENCH_CALLS_PER_REQUEST: '20',
        BENCH_CEILING_CALLS: '2000',
        BENCH_CPU_PROFILE: '0',
      },
      ['HEAD', '2'],
    );
    try {
      ok(r);
      // Both sides ran twice, in alternating order, and each figure has a ratio per pair.
      expect(r.err.match(/\[pairs\] pair \d (base|head)/g)).toEqual([
        '[pairs] pair 1 base',
        '[pairs] pair 1 head',
        '[pairs] pair 2 head',
        '[pairs] pair 2 base',
      ]);
      const row = r.out.split('\n').find((l) => l.startsWith('| allInOne calls/s |'))!;
      expect(row.match(/ → [\d,]+ \(×\d+\.\d\d\)/g)).toHaveLength(2);
      expect(r.out).toContain('| allInOne CPU-µs per call |');
    } finally {
      spawnSync('git', ['worktree', 'remove', '--force', join(dir, r.out.match(/base ([0-9a-f]{12})/)?.[1] ?? 'none')], { cwd: REPO_ROOT });
    }
  }, 300_000);

  it('bench:ingest-engine measures the schema, each view on call_parts, parsing alone and the default merge base', async () => {
    const r = await runBench('ingest-engine.ts', {
      BENCH_DIR: newDataDir('bench-ingest-engine'),
      BENCH_ENGINE_CALLS: '1000',
      BENCH_BATCHES: '500',
      BENCH_SETTLE_MS: '100',
    });
    ok(r);
    const report = JSON.parse(r.out.slice(r.out.indexOf('{')));
    const names = report.results.map((x: { variant: string }) => x.variant);
    expect(names).toEqual(
      expect.arrayContaining([
        'as migrated',
        'as TabSeparated (before envelope version 4)',
        'without calls_starts_view',
        'no views (parse only)',
        'merge base 5 (default)',
      ]),
    );
    for (const x of report.results) expect(x.cpuMicrosPerCall).toBeGreaterThan(0);
    // Parsing alone makes no part in any call table; the schema as migrated makes one in each.
    const parts = (v: string) => report.results.find((x: { variant: string }) => x.variant === v).activePartsAtEnd;
    expect(parts('no views (parse only)')).toEqual({});
    expect(Object.keys(parts('as migrated'))).toEqual(expect.arrayContaining(['calls_starts', 'calls_ends']));
    // Stored bytes per row; bench:otlp's spans (BENCH_ROWS=otlp) are stored larger than the calls.
    const starts = (rep: typeof report) =>
      rep.results.find((x: { variant: string }) => x.variant === 'as migrated').storedBytesPerRow.calls_starts;
    expect(starts(report).uncompressed).toBeGreaterThan(starts(report).compressed);
    // The same calls as RowBinary (shipped) and as TabSeparated store the same rows.
    const tsv = report.results.find((x: { variant: string }) => x.variant.startsWith('as TabSeparated')).storedBytesPerRow.calls_starts;
    expect(Math.abs(tsv.uncompressed - starts(report).uncompressed)).toBeLessThanOrEqual(starts(report).uncompressed / 100);
    const spans = await runBench('ingest-engine.ts', {
      BENCH_DIR: newDataDir('bench-ingest-engine-otlp'),
      BENCH_ROWS: 'otlp',
      BENCH_ENGINE_CALLS: '1000',
      BENCH_BATCHES: '500',
      BENCH_SETTLE_MS: '100',
      BENCH_VARIANTS: 'as migrated',
    });
    ok(spans);
    const spanReport = JSON.parse(spans.out.slice(spans.out.indexOf('{')));
    expect(spanReport.rows).toBe('otlp');
    expect(starts(spanReport).uncompressed).toBeGreaterThan(starts(report).uncompressed);
  }, 300_000);

  it('bench:query loads calls and times every query', async () => {
    const r = await runBench('query.ts', { BENCH_CALLS: '2000', BENCH_RUNS: '1', BENCH_DATA_DIR: newDataDir('bench-query') });
    ok(r);
    expect(r.out).toMatch(/loaded 2000 \+ 400 calls/);
    expect(r.out).toMatch(/loaded 2000 calls of ~1 KB into bench\/stream/);
    // Every query line has its timings (the list grows with the bench; at least the 13).
    const queries = r.out.match(/^(stream|UI|count|threads): .*$/gm) ?? [];
    expect(queries.length).toBeGreaterThanOrEqual(13);
    for (const q of queries) expect(q).toMatch(/ median +\d+ ms +p95 +\d+ ms +CPU +\d+ ms +peak RSS \d+ MiB/);
    // A query that fails is reported as FAILED (and the others run): none may.
    expect(r.out).not.toContain('FAILED');
    // The full streams read every row: 20,000 capped at the 100 op-1 calls, all 2,000, then 1 in 20.
    expect(r.out).toMatch(/to the end \(op_names filter\).* 100 rows,/);
    expect(r.out).toMatch(/\(2,000 calls, ~1 KB\) to the end.* 2,000 rows, \d+ MiB, \d{4} B\/row/);
    expect(r.out).toMatch(/filtered \(op_names, 1 in 20\) \+ columns, to the end.* 100 rows,/);
  }, 300_000);

  it('bench:analytics loads calls over 30 days and times metrics queries and exports', async () => {
    const r = await runBench('analytics.ts', {
      BENCH_CALLS: '3000',
      BENCH_RUNS: '1',
      BENCH_EXPORT_CALLS: '1000',
      BENCH_DATA_DIR: newDataDir('bench-analytics'),
    });
    ok(r);
    expect(r.out).toMatch(/loaded 3000 calls over 30 days/);
    expect(r.out).toMatch(/^analytics facts: 30 days current after [\d.]+ s of waiting; \d+ build\(s\)/m);
    const lines = (r.out.match(/^(metrics|UI|export): .*$/gm) ?? []).filter((l) => !l.startsWith('UI: default dashboard'));
    expect(lines).toHaveLength(8);
    expect(r.out).toMatch(/one day changed since its facts.* 600 rows/);
    expect(r.out).toMatch(/^UI: default dashboard \(totals and 6 charts painted\) in Chromium +median +\d+ ms/m);
    for (const l of lines) expect(l).toMatch(/ median +\d+ ms +CPU +\d+ ms +RSS \+\d+ MiB/);
    expect(r.out).not.toContain('FAILED');
    // 20 ops × 30 days; 13 model names; 1,000 calls exported in both formats.
    expect(r.out).toMatch(/by op and day.* 600 rows/);
    expect(r.out).toMatch(/dotted path.* 13 rows/);
    expect(r.out.match(/export: 1,000 calls as (Parquet|JSONL).* calls\/s/g)).toHaveLength(2);
  }, 300_000);

  it('bench:monitors scores every call of a paced run and of a burst', async () => {
    const r = await runBench('monitors.ts', {
      BENCH_RATE: '40',
      BENCH_SECONDS: '2',
      BENCH_BURST: '300',
      BENCH_DATA_DIR: newDataDir('bench-monitors'),
    });
    ok(r);
    expect(r.out).toMatch(/paced: 80 calls at \d+ calls\/s for [\d.]+ s: end → scores p50 \d+ ms, p99 \d+ ms, max \d+ ms/);
    // Each call once per scorer: the paced run's 80 and the burst's 300 calls, one judge request each.
    expect(r.out).toMatch(
      /burst: 300 calls sent in [\d.]+ s, all scored after [\d.]+ s: [\d,]+ calls\/s, CPU [\d.]+ ms per call .*judge requests so far 380$/m,
    );
  }, 300_000);

  it('bench:alerts evaluates every alert over the calls and times interactive queries alone and beside the pass', async () => {
    const r = await runBench('alerts.ts', {
      BENCH_CALLS: '3000',
      BENCH_ALERTS: '30',
      BENCH_RUNS: '3',
      BENCH_DATA_DIR: newDataDir('bench-alerts'),
    });
    ok(r);
    expect(r.out).toMatch(/loaded 3,000 calls of 20 ops over the last [\d.]+ h in [\d.]+ s/);
    expect(r.out).toMatch(/alerts: 30 AlertSpecs \(6 kinds\) published in [\d.]+ s/);
    // Every alert is read and evaluated: none invalid (the op refs are the loaded calls' ops), none failing.
    expect(r.out).toMatch(/first pass: 30 of 30 alerts evaluated \(\d+ firing\) in [\d,]+ ms, CPU [\d,]+ ms/);
    expect(r.out).toMatch(/pass alone: wall [\d,]+ ms, CPU [\d,]+ ms per pass, [\d.]+ ms per alert/);
    for (const q of ['calls page \\(50 of one op\\)', 'count \\(one op\\)']) {
      expect(r.out).toMatch(new RegExp(`interactive alone, ${q}: median [\\d,]+ ms, p95 [\\d,]+ ms \\(3 runs\\)`));
      expect(r.out).toMatch(
        new RegExp(`interactive beside a pass, ${q}: median [\\d,]+ ms, p95 [\\d,]+ ms \\(\\d+ runs\\); the pass took [\\d,]+ ms`),
      );
    }
  }, 300_000);

  it('bench:team times each class alone and under the team, with the lanes and with one lane; the soak per minute', async () => {
    const r = await runBench('team.ts', { BENCH_CALLS: '3000', BENCH_SECONDS: '4', BENCH_DATA_DIR: newDataDir('bench-team') });
    ok(r);
    for (const lanes of ['separate', 'one']) {
      const part = r.out.slice(r.out.indexOf(`# WEFT_LANES=${lanes}`));
      expect(part).toMatch(/## each class alone/);
      expect(part).toMatch(/## team for 4 s/);
      // Every class answered, and nothing with a 5xx (a heavy request may be refused with a 429 only).
      for (const c of ['page', 'trace', 'count', 'search', 'analytics', 'dashboard', 'write_to_read', 'export', 'ingest_ack'])
        expect(part).toMatch(new RegExp(`  ${c} +n= +\\d+  p50 +\\d+ ms  p99 +\\d+ ms  (200|429)×`));
      expect(part).not.toMatch(/5\d\d×/);
    }
    const soak = await runBench('team.ts', { BENCH_CALLS: '2000', BENCH_SECONDS: '5', BENCH_DATA_DIR: newDataDir('bench-team-soak') }, [
      '--soak',
    ]);
    ok(soak);
    expect(soak.out).toMatch(/ +1 +\d+ +\d+ +\d+ +\d+\n/);
    // Nothing acknowledged is missing.
    const [, acked, stored] = /acknowledged (\d+) calls, stored (\d+)/.exec(soak.out) ?? [];
    expect(Number(acked)).toBeGreaterThan(0);
    expect(stored).toBe(acked);
  }, 300_000);

  it('bench:retention loads calls over 30 days and times one retention pass', async () => {
    const r = await runBench('retention.ts', { BENCH_CALLS: '3000', BENCH_DATA_DIR: newDataDir('bench-retention') });
    ok(r);
    // Half the calls are older than the 15 days kept; every other one had a usage, irrelevant here.
    expect(r.out).toMatch(
      /retention pass: 3,000 → 1,\d{3} calls \(1,\d{3} end rows, \d+ feedback left\) in \d+ ms, CPU \d+ ms, peak RSS \+\d+ MiB/,
    );
    expect(r.out).toMatch(/second pass \(nothing expired\): \d+ ms/);
  }, 300_000);

  it('bench:stream-memory loads, streams to the end, and splits the memory growth into its shares', async () => {
    const r = await runBench('stream-memory.ts', { BENCH_STREAM_CALLS: '3000', BENCH_DATA_DIR: newDataDir('bench-stream-memory') });
    ok(r);
    expect(r.out).toMatch(/loaded 3000 calls of ~1 KB/);
    expect(r.out.match(/^run \d: 3,000 rows in \d+ ms/gm)).toHaveLength(2);
    for (const line of r.out.match(/^  (at the RSS peak|after the stream|6 s later).*$/gm) ?? [])
      expect(line).toMatch(
        /RSS [+-]\d+ MiB = Node heap [+-]\d+, Node buffers [+-]\d+, engine tracked [+-]\d+ \(jemalloc allocated [+-]\d+, resident [+-]\d+, dirty [+-]\d+\)/,
      );
    expect(r.out.match(/^  (at the RSS peak|after the stream|6 s later)/gm)).toHaveLength(6);
  }, 300_000);

  it('bench:query runs every query in server mode too (the engine behind its HTTP interface)', async () => {
    const r = await runBench('query.ts', {
      BENCH_SERVER: '1',
      BENCH_CALLS: '2000',
      BENCH_RUNS: '1',
      BENCH_DATA_DIR: newDataDir('bench-query-server'),
    });
    ok(r);
    const queries = r.out.match(/^(stream|UI|count|threads): .*$/gm) ?? [];
    expect(queries.length).toBeGreaterThanOrEqual(13);
    for (const q of queries) expect(q).toMatch(/ median +\d+ ms +p95 +\d+ ms +CPU +\d+ ms +peak RSS \d+ MiB/);
    expect(r.out).not.toContain('FAILED');
    expect(r.out).toMatch(/\(2,000 calls, ~1 KB\) to the end.* 2,000 rows, \d+ MiB, \d{4} B\/row/);
  }, 300_000);

  it('bench:otlp acknowledges and stores every span, in both encodings', async () => {
    const r = await runBench('otlp.ts', {
      BENCH_SECONDS: '1',
      BENCH_WARMUP_SECONDS: '0.5',
      BENCH_CONCURRENCY: '2',
      BENCH_BATCH: '64',
      BENCH_CONVERSION_MS: '200',
    });
    ok(r);
    expect(r.out.match(/spans\/s acknowledged/g)?.length).toBeGreaterThanOrEqual(2);
    expect(r.out).toMatch(/OTLP\/gRPC via TraceService\/Export: \d+ spans\/s acknowledged/);
    // The conversion on one and on two worker threads (WEFT_INGEST_WORKERS).
    expect(r.out).toMatch(/protobuf_to_insert_bytes_on_1_worker: \{ per_wall_s: [1-9]\d*/);
    expect(r.out).toMatch(/protobuf_to_insert_bytes_on_2_workers: \{ per_wall_s: [1-9]\d*/);
    // The server's CPU per span by thread: its JavaScript thread's share is always there.
    const byThread = /CPU-µs per span by thread (\{[^}]*\})/.exec(r.out);
    expect(byThread).not.toBeNull();
    expect(JSON.parse(byThread![1]!).main).toBeGreaterThan(0);
    expect(r.out).not.toContain('MISSING');
    expect(r.out).toMatch(/stored calls: (\d+) of \1 acknowledged spans \(all\)/);
  }, 300_000);

  it('bench:overload reports every scenario in both modes, and nothing refused was stored', async () => {
    const r = await runBench('overload.ts', {
      KAFKA_BROKERS: inject('kafkaBrokers'),
      BENCH_DIR: newDataDir('bench-overload'),
      BENCH_SECONDS: '1',
      BENCH_BODY_CALLS: '20',
      BENCH_RSS_SECONDS: '1',
      BENCH_RSS_BODY_CALLS: '20',
      // Tiny bodies: a tiny bound, so the aggressive scenarios meet it.
      BENCH_MAX_PENDING_BYTES: '100000',
    });
    ok(r);
    const report = JSON.parse(r.out.slice(r.out.indexOf('{'), r.out.indexOf('\n| scenario')));
    for (const mode of [report.allInOne, report.kafka]) {
      expect(mode.results).toHaveLength(4);
      expect(mode.results[0].ackedCallsPerSec).toBeGreaterThan(0);
      expect(mode.refusedStored).toBe(0);
      expect(mode.ackedMissing).toBe(0);
    }
    expect(report.memory.peakRssMiB).toBeGreaterThan(0);
  }, 300_000);

  it('bench:tables appends, pages, sorts and streams', async () => {
    const r = await runBench('tables.ts', {}, ['3000', '1000']);
    ok(r);
    expect(r.out).toMatch(/append: 3000 rows/);
    expect(r.out).toMatch(/stream all 3000 rows/);
  }, 300_000);

  it('bench:writers drains a backlog into one shared store, every call stored', async () => {
    const r = await runBench('writers.ts', {
      KAFKA_BROKERS: inject('kafkaBrokers'),
      BENCH_DIR: newDataDir('bench-writers'),
      BENCH_CALLS: '2000',
      BENCH_WRITERS: '1,2',
    });
    ok(r);
    const report = JSON.parse(r.out.slice(r.out.indexOf('{')));
    expect(report.runs.map((x: { writers: number }) => x.writers)).toEqual([1, 2]);
    for (const run of report.runs) {
      expect(run.storedCalls).toBe(2000);
      expect(run.callsPerSec).toBeGreaterThan(0);
      expect(run.cpuMicrosPerCall.writers).toBeGreaterThan(0);
      expect(run.cpuMicrosPerCall.clickhouse).toBeGreaterThan(0);
    }
  }, 300_000);

  it('bench:ui renders the calls view in Chromium and fetches only the pages it shows', async () => {
    const r = await runBench('ui.ts', { BENCH_CALLS: '3000', BENCH_RUNS: '1', BENCH_DATA_DIR: newDataDir('bench-ui') });
    ok(r);
    expect(r.out).toMatch(/first page of rows on screen: +median \d+ ms/);
    expect(r.out).toMatch(/jump to the middle of the scrollbar, rows on screen: median \d+ ms/);
    expect(r.out).toMatch(/analytics view over the whole project, totals and charts on screen: median \d+ ms/);
    const m = /most rows fetched in one session .*: (\d+) of 3000/.exec(r.out);
    expect(m, r.out).not.toBeNull();
    expect(Number(m![1])).toBeLessThan(3000);
  }, 300_000);
});
