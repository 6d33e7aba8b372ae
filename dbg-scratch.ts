import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from './libs/store/src/connection';
import { defaultLaneOptions } from './libs/store/src/lanes';
const lanes = defaultLaneOptions();
lanes.maxSeconds.heavy = 1;
lanes.connections.heavy = 1;
lanes.queueMs.heavy = 300;
const store = openStore({ dataDir: mkdtempSync(join(tmpdir(), 'dbg-')), lanes });
const LONG = 'SELECT count() FROM numbers({n:UInt64}) WHERE sipHash64(number) % 7 = {r:UInt8}';
const t0 = performance.now();
const first = store.rows(LONG, { n: 5_000_000_000, r: 4 }, { lane: 'heavy', name: 'x' }).then(
  (r) => ['ok', r],
  (e) => ['err', String(e), performance.now() - t0],
);
await new Promise((r) => setTimeout(r, 50));
console.log(await store.rows("SELECT Settings['log_comment'] c, Settings['max_execution_time'] m, query FROM system.processes"));
console.log(
  await store.rows('SELECT 1', undefined, { lane: 'heavy' }).then(
    (r) => ['ok', r, performance.now() - t0],
    (e) => ['err', String(e)],
  ),
);
console.log(await first);
const abort = new AbortController();
const p = store.rows(LONG, { n: 5_000_000_000, r: 3 }, { lane: 'heavy', name: 'y', signal: abort.signal }).then(
  (r) => ['ok', r],
  (e) => ['err', String(e), performance.now() - t0],
);
await new Promise((r) => setTimeout(r, 300));
abort.abort();
await new Promise((r) => setTimeout(r, 100));
console.log(await store.rows("SELECT Settings['log_comment'] c, elapsed FROM system.processes"));
console.log(await p);
await new Promise((r) => setTimeout(r, 1000));
console.log('after 1s', await store.rows("SELECT Settings['log_comment'] c, elapsed, is_cancelled FROM system.processes"));
await store.rows('SELECT 1', undefined, { lane: 'heavy' });
console.log('after heavy stmt', await store.rows("SELECT Settings['log_comment'] c, elapsed FROM system.processes"));
await store.close();
