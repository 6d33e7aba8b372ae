/**
 * Million-row table benchmark: appends N rows to a table through /table/update in chunks
 * (as the reference's SDK does), then pages it (start, middle, end) and sorts it on a field.
 * Runs the real all-in-one server (embedded ClickHouse) as a child process and reports rates
 * and the server's peak memory (VmHWM), which stays bounded because no request loads the table.
 *
 *   npx tsx bench/tables.ts [rows=1000000] [chunk=20000]
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, startWeft } from '@weft/harness';

const ROWS = Number(process.argv[2] ?? 1_000_000);
const CHUNK = Number(process.argv[3] ?? 20_000);
const P = 'bench/tables';
const EMPTY = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

const peakRssMb = (pid: number) => {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : NaN;
};
const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;

// Its own scratch directory: the test suite wipes .weft-test/ when it starts.
const dataDir = mkdtempSync(join(tmpdir(), 'weft-bench-tables-'));
const weft = await startWeft({ dataDir });
const api = new Client(weft.url);
try {
  let digest = EMPTY;
  const t0 = process.hrtime.bigint();
  let slowest = 0;
  for (let start = 0; start < ROWS; start += CHUNK) {
    const n = Math.min(CHUNK, ROWS - start);
    const updates = Array.from({ length: n }, (_, j) => ({
      append: { row: { n: start + j, score: ((start + j) * 7919) % ROWS, text: `row number ${start + j}` } },
    }));
    const t = process.hrtime.bigint();
    const r = await api.post('/table/update', { project_id: P, base_digest: digest, updates });
    if (r.status !== 200) throw new Error(`append at ${start}: ${r.status} ${r.text.slice(0, 300)}`);
    slowest = Math.max(slowest, ms(t));
    digest = r.body.digest;
    if ((start / CHUNK) % 10 === 0) console.log(`  ${start + n} rows, last append ${ms(t).toFixed(0)} ms`);
  }
  const appendMs = ms(t0);
  console.log(
    `append: ${ROWS} rows in ${(appendMs / 1000).toFixed(1)} s = ${Math.round(ROWS / (appendMs / 1000))} rows/s; slowest ${CHUNK}-row append ${slowest.toFixed(0)} ms`,
  );

  for (const offset of [0, Math.floor(ROWS / 2), ROWS - 100]) {
    const t = process.hrtime.bigint();
    const r = await api.post('/table/query', { project_id: P, digest, offset, limit: 100 });
    if (r.status !== 200 || r.body.rows[0].original_index !== offset) throw new Error(`page at ${offset}: ${r.text.slice(0, 200)}`);
    console.log(`page of 100 at offset ${offset}: ${ms(t).toFixed(0)} ms`);
  }
  {
    const t = process.hrtime.bigint();
    const r = await api.post('/table/query', { project_id: P, digest, sort_by: [{ field: 'score', order: 'desc' }], limit: 10 });
    if (r.status !== 200 || r.body.rows[0].val.score !== ROWS - 1) throw new Error(`sorted: ${r.text.slice(0, 200)}`);
    console.log(`top 10 of ${ROWS} sorted by a field: ${ms(t).toFixed(0)} ms`);
  }
  {
    const t = process.hrtime.bigint();
    let lines = 0;
    const res = await fetch(`${weft.url}/table/query_stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: api.authorization! },
      body: JSON.stringify({ project_id: P, digest }),
    });
    const reader = res.body!.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      for (const b of value) if (b === 10) lines++;
    }
    if (lines !== ROWS) throw new Error(`stream gave ${lines} rows`);
    const s = ms(t) / 1000;
    console.log(`stream all ${ROWS} rows: ${s.toFixed(1)} s = ${Math.round(ROWS / s)} rows/s`);
  }
  console.log(`server peak RSS: ${peakRssMb(weft.proc.pid!)} MB (2-core machine, embedded ClickHouse in-process)`);
} finally {
  await weft.stop();
  // A million rows of scratch data: not left behind in the temp directory run after run.
  rmSync(dataDir, { recursive: true, force: true });
}
