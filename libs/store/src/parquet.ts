import { createRequire } from 'node:module';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Store } from './connection';

/**
 * JSONEachRow file → Parquet file, written by the engine (no Parquet code of ours). The input
 * file is read and the output written as streams, so memory stays bounded whatever the size.
 * Embedded, the store's own chDB does it; with a ClickHouse server (which cannot read this
 * process's files), a private chDB session of this process, opened on first use.
 */
export async function jsonlToParquet(store: Store, input: string, structure: string, output: string): Promise<void> {
  await writeParquet(
    store,
    `SELECT * FROM file(${quote(input)}, 'JSONEachRow', ${quote(structure)}) INTO OUTFILE ${quote(output)} FORMAT Parquet
    SETTINGS date_time_input_format = 'best_effort', input_format_skip_unknown_fields = 1, ${PARQUET_SETTINGS}`,
  );
}

/**
 * A file of JSON objects, one a line → Parquet file, its columns `select` expressions over each
 * line's top-level members (`members`, an Array(Tuple(String, String)) of each member's name and
 * raw JSON text): the engine parses each line once, whatever the number of columns, so lines
 * already in JSON (the calls stream's) are never parsed here.
 */
export async function jsonLinesToParquet(store: Store, input: string, select: string, output: string): Promise<void> {
  await writeParquet(
    store,
    `SELECT ${select} FROM (SELECT JSONExtractKeysAndValuesRaw(line) AS members FROM file(${quote(input)}, 'LineAsString', 'line String') WHERE line != '')
    INTO OUTFILE ${quote(output)} FORMAT Parquet SETTINGS ${PARQUET_SETTINGS}`,
  );
}

/**
 * zstd, and row groups of 64k rows: the writer holds one row group in memory, not the whole
 * file. The input file is read with pread, not mapped: a mapped file's pages count in this
 * process's RSS (a 1M-call export's 656 MiB of lines did).
 */
const PARQUET_SETTINGS = `output_format_parquet_compression_method = 'zstd', output_format_parquet_row_group_size = 65536, output_format_parquet_row_group_size_bytes = 33554432, max_block_size = 8192, input_format_parallel_parsing = 0, storage_file_read_method = 'pread'`;

async function writeParquet(store: Store, sql: string): Promise<void> {
  if (store.mode === 'embedded') {
    await store.command(sql, undefined, { name: 'parquet.write' });
    return;
  }
  const result = await converter().queryAsync(sql);
  void result;
}

/** A SQL string literal (the paths are ours, never a caller's; quoted all the same). */
const quote = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

interface ChdbSession {
  queryAsync(query: string): Promise<unknown>;
}
let session: ChdbSession | undefined;
function converter(): ChdbSession {
  if (!session) {
    // chdb is published as CommonJS.
    const require = createRequire(import.meta.url);
    const { Session } = require('chdb') as { Session: new (path: string) => ChdbSession };
    session = new Session(mkdtempSync(join(tmpdir(), 'weft-parquet-')));
  }
  return session;
}
