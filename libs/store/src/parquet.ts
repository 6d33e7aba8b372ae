import type { Store } from './connection';

/**
 * JSONEachRow file → Parquet file, written by the engine (no Parquet code of ours) on a
 * connection of its own (Store.convert). The input is read and the output written as streams,
 * so memory stays bounded whatever the size.
 */
export async function jsonlToParquet(store: Store, input: string, structure: string, output: string): Promise<void> {
  await store.convert(
    `SELECT * FROM file(${quote(input)}, 'JSONEachRow', ${quote(structure)}) INTO OUTFILE ${quote(output)} FORMAT Parquet
    SETTINGS date_time_input_format = 'best_effort', input_format_skip_unknown_fields = 1, ${PARQUET_SETTINGS}`,
  );
}

/**
 * A file of JSON objects, one a line → Parquet file, its columns `select` expressions over each
 * line's text (`line`) and the members it names (`m`: `members`, a named Tuple type, extracted in
 * one parse of the line): lines already in JSON (the calls stream's) are never parsed here.
 */
export async function jsonLinesToParquet(store: Store, input: string, members: string, select: string, output: string): Promise<void> {
  await store.convert(
    `SELECT ${select} FROM (SELECT line, JSONExtract(line, ${quote(members)}) AS m FROM file(${quote(input)}, 'LineAsString', 'line String') WHERE line != '')
    INTO OUTFILE ${quote(output)} FORMAT Parquet SETTINGS ${PARQUET_SETTINGS}`,
  );
}

/**
 * zstd, and row groups of 64k rows: the writer holds one row group in memory, not the whole
 * file. The input is read with read(), neither mapped (a mapped file's pages count in this
 * process's RSS) nor with pread: the input may be a named pipe the rows are written to as they come.
 */
const PARQUET_SETTINGS = `output_format_parquet_compression_method = 'zstd', output_format_parquet_row_group_size = 65536, output_format_parquet_row_group_size_bytes = 33554432, max_block_size = 8192, input_format_parallel_parsing = 0, storage_file_read_method = 'read'`;

/** A SQL string literal (the paths are ours, never a caller's; quoted all the same). */
const quote = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
