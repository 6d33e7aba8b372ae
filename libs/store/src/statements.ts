import type { ClickHouseClient, ClickHouseSettings } from '@clickhouse/client';
import { metrics } from '@weft/core';
import { toStoreError } from './errors';

/** Values for the statement's `{name:Type}` placeholders (Params' `values`). */
export type StatementParams = Record<string, unknown>;

export interface StatementOptions {
  /**
   * What the statement is for (`keys.find`): a bounded name, the label of its duration metric,
   * its `log_comment` in the engine's query log, and named in the StoreError when it fails.
   */
  name?: string;
  /** Engine settings for this statement only. */
  settings?: ClickHouseSettings;
  /** Stops the statement (a request whose caller went away, a probe past its deadline). */
  signal?: AbortSignal;
}

/** Output formats streamRaw answers in (the engine's names). */
export type RawOutputFormat = 'RowBinary' | 'TabSeparated' | 'TabSeparatedWithNames' | 'CSVWithNames' | 'JSONEachRow' | 'Parquet';

export interface RawStatementOptions extends StatementOptions {
  format: RawOutputFormat;
}

/**
 * The typed statements every package uses instead of the client: rows come back as objects
 * (JSONEachRow), failures as StoreError (errors.ts) with their kind, each timed by name.
 */
export interface StoreStatements {
  /** The rows of a SELECT, as objects. */
  rows<T>(sql: string, params?: StatementParams, opts?: StatementOptions): Promise<T[]>;
  /** The first row of a SELECT, or undefined when there is none. */
  row<T>(sql: string, params?: StatementParams, opts?: StatementOptions): Promise<T | undefined>;
  /**
   * The rows of a SELECT as they come (JSONEachRow, parsed a block at a time): the engine is read
   * only as fast as the caller takes rows, and `signal` (or leaving the loop) stops the statement.
   */
  streamRows<T>(sql: string, params?: StatementParams, opts?: StatementOptions): AsyncGenerator<T>;
  /**
   * The answer of a SELECT in `format`, as the engine writes it, in chunks as they come (RowBinary
   * to decode, or CSV/JSONEachRow text to pass on untouched); read-as-taken and stopped as streamRows.
   */
  streamRaw(sql: string, params: StatementParams | undefined, opts: RawStatementOptions): AsyncGenerator<Buffer>;
  /** A statement without rows back (DDL, mutations, `INSERT … SELECT`). */
  command(sql: string, params?: StatementParams, opts?: StatementOptions): Promise<void>;
  /** Inserts row objects (JSONEachRow) in one INSERT; nothing to do for no rows. */
  insertRows(table: string, rows: readonly object[], opts?: Omit<StatementOptions, 'signal'>): Promise<void>;
}

/** The statements over a client (the same for both connections: chDB is the client's connection embedded). */
export function statementsOf(client: ClickHouseClient): StoreStatements {
  const settingsOf = (opts: StatementOptions | undefined): ClickHouseSettings | undefined =>
    opts?.name ? { ...opts.settings, log_comment: opts.name } : opts?.settings;
  const run = async <R>(opts: StatementOptions | undefined, work: () => Promise<R>): Promise<R> => {
    const started = performance.now();
    const statement = opts?.name ?? 'unnamed';
    try {
      const result = await work();
      metrics.storeStatementSeconds.observe({ statement, outcome: 'ok' }, (performance.now() - started) / 1000);
      return result;
    } catch (e) {
      const err = toStoreError(e, opts?.name, opts?.signal);
      metrics.storeStatementSeconds.observe({ statement, outcome: err.kind }, (performance.now() - started) / 1000);
      throw err;
    }
  };
  /** A SELECT's answer as JSONEachRow rows, read whole (rows) or as they come (streamRows). */
  const jsonRows = (sql: string, params: StatementParams | undefined, opts: StatementOptions | undefined) =>
    client.query({
      query: sql,
      query_params: params,
      format: 'JSONEachRow',
      clickhouse_settings: settingsOf(opts),
      abort_signal: opts?.signal,
    });
  const rows = <T>(sql: string, params?: StatementParams, opts?: StatementOptions): Promise<T[]> =>
    run(opts, async () => (await jsonRows(sql, params, opts)).json<T>());
  /** A stream's statement: timed and classified like the others, from its start to its last chunk. */
  const streamed = async function* <R>(opts: StatementOptions | undefined, chunks: () => Promise<AsyncIterable<R>>): AsyncGenerator<R> {
    const started = performance.now();
    const statement = opts?.name ?? 'unnamed';
    let outcome = 'ok';
    try {
      // Leaving the loop early returns the client's stream iterator, which destroys the response.
      for await (const chunk of await chunks()) yield chunk;
    } catch (e) {
      const err = toStoreError(e, opts?.name, opts?.signal);
      outcome = err.kind;
      throw err;
    } finally {
      // Also when the caller left the loop early (the statement then ended well, as far as it went).
      metrics.storeStatementSeconds.observe({ statement, outcome }, (performance.now() - started) / 1000);
    }
  };
  return {
    rows,
    row: async <T>(sql: string, params?: StatementParams, opts?: StatementOptions) => (await rows<T>(sql, params, opts))[0],
    streamRows: async function* <T>(sql: string, params?: StatementParams, opts?: StatementOptions): AsyncGenerator<T> {
      const blocks = streamed(opts, async () => (await jsonRows(sql, params, opts)).stream<T>());
      for await (const block of blocks) for (const r of block) yield r.json<T>();
    },
    streamRaw: (sql, params, opts) =>
      streamed(opts, async () => {
        // exec: the answer's bytes untouched (query() would decode them into rows).
        const rs = await client.exec({
          query: `${sql}\nFORMAT ${opts.format}`,
          query_params: params,
          clickhouse_settings: settingsOf(opts),
          abort_signal: opts.signal,
        });
        return rs.stream as AsyncIterable<Buffer>;
      }),
    command: (sql, params, opts) =>
      run(opts, async () => {
        await client.command({ query: sql, query_params: params, clickhouse_settings: settingsOf(opts), abort_signal: opts?.signal });
      }),
    insertRows: (table, values, opts) =>
      values.length === 0
        ? Promise.resolve()
        : run(opts, async () => {
            await client.insert({ table, values: values as object[], format: 'JSONEachRow', clickhouse_settings: settingsOf(opts) });
          }),
  };
}
