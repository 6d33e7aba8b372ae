/**
 * Where an insert of call parts goes inside the engine (`npm run bench:ingest-engine`): the same
 * ~1.3 KB calls as bench:ingest, inserted as RowBinary (the services' path) into embedded
 * ClickHouse in a sustained stream of inserts of BENCH_BATCHES calls, once with the schema as
 * migrated and once per variant: without each materialized view on call_parts (what that view's
 * table costs per call, its merges included), without any (parsing alone), with the call
 * tables' merges at ClickHouse's default base (what merge_selector_base = 10 saves), and as TabSeparated
 * (the format before envelope version 4).
 *
 * Reports per variant the process CPU per call (every thread: the insert, the views, the
 * background merges while the stream runs and for BENCH_SETTLE_MS after) and, from the
 * engine's own counters (system.events), the rows its merges rewrote per call.
 *
 * Also per variant: the call tables' stored bytes per row (compressed and not), at the end.
 *
 * Env: BENCH_ENGINE_CALLS (40,000 per variant), BENCH_BATCHES (calls per insert, `800,1600`),
 * BENCH_SETTLE_MS (3000), BENCH_DIR (scratch, wiped), BENCH_VARIANTS (a comma list to run only some),
 * BENCH_ROWS (`calls`: bench:ingest's calls; `otlp`: bench:otlp's spans, as the gateway makes them).
 * `BENCH_ENGINE_CALLS=30 BENCH_BATCHES=1 BENCH_SETTLE_MS=0` reads what an insert costs before its
 * first row (CPU per call = per insert).
 */
import { mkdirSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import {
  CALL_PART_COLUMNS,
  encodeCallPartsRowBinary,
  migrate,
  openStore,
  type CallPartRow,
  type InsertSettings,
  type RawRowFormat,
  type Store,
} from '@weft/store';
import { encodeCallPartsTsv, REPO_ROOT } from '@weft/harness';
import { coalesceCallParts, spansToParts } from '@weft/ingest';
import { encodeExportTraceServiceRequest } from '@weft/otlp';
import { exportRequest } from './otlp-span-mix';
import { sampleParts } from './sample-calls';

const CALLS = Number(process.env.BENCH_ENGINE_CALLS ?? 40_000);
const BATCHES = (process.env.BENCH_BATCHES ?? '800,1600').split(',').map(Number);
const SETTLE_MS = Number(process.env.BENCH_SETTLE_MS ?? 3000);
const ROOT = process.env.BENCH_DIR ?? join(REPO_ROOT, '.bench', 'engine');
const ONLY = process.env.BENCH_VARIANTS?.split(',');
const CALL_TABLES = ['calls_starts', 'calls_ends', 'calls_deleted'];
const ROWS = process.env.BENCH_ROWS ?? 'calls';
if (ROWS !== 'calls' && ROWS !== 'otlp') throw new Error(`BENCH_ROWS: calls or otlp, not ${ROWS}`);

/** bench:otlp's spans as the gateway turns them into call parts (one whole-call part per span). */
function otlpSpanParts(n: number): CallPartRow[] {
  const rows: CallPartRow[] = [];
  while (rows.length < n) {
    const r = spansToParts(
      { protobuf: encodeExportTraceServiceRequest(exportRequest(512, true)) },
      { projectId: 'bench/engine', runId: null, userId: 'bench', acceptedAtMicros: Date.now() * 1000 },
    );
    if (!r.ok) throw new Error(r.message);
    rows.push(...r.rows);
  }
  return rows.slice(0, n);
}

interface Variant {
  name: string;
  /** Each call as a start part and an end part, as before whole-call parts (else one part per call, as shipped). */
  separateParts?: boolean;
  /** Statements run on the freshly migrated store before the stream. */
  change: (store: Store) => Promise<string[]>;
  /** Settings of every insert of the stream. */
  settings?: InsertSettings;
  /** The insert's format (else RowBinary, as shipped). */
  format?: RawRowFormat;
}

const query = async <T>(store: Store, sql: string) => (await store.client.query({ query: sql, format: 'JSONEachRow' })).json<T>();
const views = (store: Store) =>
  query<{ name: string }>(
    store,
    `SELECT name FROM system.tables WHERE database = currentDatabase() AND engine = 'MaterializedView' AND position(create_table_query, 'call_parts') > 0 ORDER BY name`,
  ).then((r) => r.map((v) => v.name));
const existingCallTables = async (store: Store) =>
  (await query<{ name: string }>(store, 'SELECT name FROM system.tables WHERE database = currentDatabase()'))
    .map((t) => t.name)
    .filter((t) => CALL_TABLES.includes(t));

async function variants(): Promise<Variant[]> {
  // The view names, from a migrated scratch store: a new view on call_parts is measured too.
  const dir = join(ROOT, 'probe');
  const store = openStore({ dataDir: dir });
  await migrate(store.client);
  const names = await views(store);
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  return [
    { name: 'as migrated', change: async () => [] },
    { name: 'as TabSeparated (before envelope version 4)', change: async () => [], format: 'TabSeparated' as const },
    { name: 'start and end as two parts (before whole-call parts)', change: async () => [], separateParts: true },
    ...names.map((v) => ({ name: `without ${v}`, change: async () => [`DROP VIEW ${v}`] })),
    { name: 'no views (parse only)', change: async () => names.map((v) => `DROP VIEW ${v}`) },
    // calls_ends' ready-made columns, computed by the engine on every end row stored.
    { name: 'without calls_ends.status/usage', change: async () => ['ALTER TABLE calls_ends DROP COLUMN status, DROP COLUMN usage'] },
    // The line fragments, built by the engine on every start and end row stored.
    {
      name: 'without the line fragments',
      change: async () => [
        'ALTER TABLE calls_starts DROP COLUMN line_start, DROP COLUMN line_svc, DROP COLUMN line_trace_name',
        'ALTER TABLE calls_ends DROP COLUMN line_tail',
      ],
    },
    // is_turn computed per start row, the 0.01 % bloom filters on the call and trace ids (built
    // per part and per merge) instead of coarse ones (2.5 %).
    {
      name: 'without is_turn and the exact id/trace filters',
      change: async () => [
        'ALTER TABLE calls_starts DROP COLUMN is_turn, DROP INDEX idx_id_exact, DROP INDEX idx_trace_id_exact',
        'ALTER TABLE calls_starts ADD INDEX idx_id id TYPE bloom_filter GRANULARITY 1, ADD INDEX idx_trace_id trace_id TYPE bloom_filter GRANULARITY 1',
      ],
    },
    { name: 'optimize_on_insert = 0', change: async () => [], settings: { optimize_on_insert: 0 } },
    {
      name: 'merge base 5 (default)',
      change: async (store: Store) =>
        (await existingCallTables(store)).map((t) => `ALTER TABLE ${t} MODIFY SETTING merge_selector_base = 5`),
    },
  ].filter((v) => !ONLY || ONLY.some((o) => v.name.includes(o)));
}

/** Each insert's body, encoded once per format before the stream. */
type Payloads = Record<RawRowFormat, Buffer[]>;

async function engineEvents(store: Store): Promise<Record<string, number>> {
  const rows = await query<{ event: string; value: string }>(
    store,
    "SELECT event, value FROM system.events WHERE event IN ('MergedRows', 'Merge', 'InsertedRows')",
  );
  return Object.fromEntries(rows.map((r) => [r.event, Number(r.value)]));
}

async function run(variant: Variant, batchCalls: number, payloads: Payloads, index: number) {
  const dir = join(ROOT, `v${index}-${batchCalls}`);
  rmSync(dir, { recursive: true, force: true });
  const store = openStore({ dataDir: dir });
  try {
    await migrate(store.client);
    for (const sql of await variant.change(store)) await store.client.command({ query: sql });
    // The engine's counters are per process: take the difference over this run.
    const before = await engineEvents(store);
    const cpu = process.cpuUsage();
    const started = performance.now();
    const format = variant.format ?? 'RowBinary';
    for (const p of payloads[format]) await store.insertRaw('call_parts', CALL_PART_COLUMNS, format, p, variant.settings);
    const insertSeconds = (performance.now() - started) / 1000;
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const used = process.cpuUsage(cpu);
    const after = await engineEvents(store);
    const d = (k: string) => (after[k] ?? 0) - (before[k] ?? 0);
    const partsNow = await query<{ table: string; n: string; rows: string; compressed: string; uncompressed: string }>(
      store,
      `SELECT table, count() AS n, sum(rows) AS rows, sum(data_compressed_bytes) AS compressed, sum(data_uncompressed_bytes) AS uncompressed
       FROM system.parts WHERE active AND database = currentDatabase() AND table IN (${CALL_TABLES.map((t) => `'${t}'`).join(',')}) GROUP BY table`,
    );
    return {
      variant: variant.name,
      callsPerInsert: batchCalls,
      cpuMicrosPerCall: Math.round((used.user + used.system) / CALLS),
      callsPerSecWhileInserting: Math.round(CALLS / insertSeconds),
      mergesRun: d('Merge'),
      mergedRowsPerCall: +(d('MergedRows') / CALLS).toFixed(2),
      activePartsAtEnd: Object.fromEntries(partsNow.map((p) => [p.table, Number(p.n)])),
      // Bytes per row stored (a replayed row not folded yet counts once more).
      storedBytesPerRow: Object.fromEntries(
        partsNow.map((p) => [
          p.table,
          {
            compressed: Math.round(Number(p.compressed) / Number(p.rows)),
            uncompressed: Math.round(Number(p.uncompressed) / Number(p.rows)),
          },
        ]),
      ),
    };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  rmSync(ROOT, { recursive: true, force: true });
  mkdirSync(ROOT, { recursive: true });
  // OTLP spans are whole calls already: their "separate parts" variant is not run.
  const separate = ROWS === 'calls' ? sampleParts(CALLS) : [];
  const rows = ROWS === 'calls' ? coalesceCallParts(separate) : otlpSpanParts(CALLS);
  const report: Record<string, unknown> = { rows: ROWS, calls: CALLS, settleMs: SETTLE_MS, loadAverageAtStart: +loadavg()[0]!.toFixed(1) };
  const all = (await variants()).filter((v) => ROWS === 'calls' || !v.separateParts);
  const results = [];
  // Encoded once per batch size, outside the measured loop: the engine's share alone. The same calls per insert either way.
  const encode = (parts: CallPartRow[], perInsert: number): Payloads => {
    const out: Payloads = { RowBinary: [], TabSeparated: [] };
    for (let i = 0; i < parts.length; i += perInsert) {
      out.RowBinary.push(encodeCallPartsRowBinary(parts.slice(i, i + perInsert)));
      out.TabSeparated.push(encodeCallPartsTsv(parts.slice(i, i + perInsert)));
    }
    return out;
  };
  for (const batch of BATCHES) {
    const payloads = encode(rows, batch);
    const separatePayloads = all.some((v) => v.separateParts) ? encode(separate, 2 * batch) : { RowBinary: [], TabSeparated: [] };
    for (const [i, v] of all.entries()) {
      const r = await run(v, batch, v.separateParts ? separatePayloads : payloads, i);
      process.stderr.write(`${JSON.stringify(r)}\n`);
      results.push(r);
    }
  }
  report.results = results;
  report.loadAverageAtEnd = +loadavg()[0]!.toFixed(1);
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
}

main().catch((e) => {
  process.stderr.write(`${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
