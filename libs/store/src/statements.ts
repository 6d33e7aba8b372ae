import type { ClickHouseClient, ClickHouseSettings } from '@clickhouse/client';
import { isRetryable, type Lane, LANES, LimitExceededError, metrics, statementContext } from '@weft/core';
import { StoreError, toStoreError } from './errors';
import { abandonedError, laneSettings, type LaneOptions, LaneYielding, type LaneTurns } from './lanes';

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
  /** The lane it runs in, when not the one of the work it runs for (@weft/core statementContext). */
  lane?: Lane;
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
  /** The tags (log_comment) of the statements begun and not yet done: what a slow close is waiting for. */
  running(): string[];
  /** Statements running or waiting for a turn in `lanes` now (whether the engine has work beside a caller's own). */
  busy(lanes: readonly Lane[]): number;
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

/** libs/store's own: a statement that is none of the typed ones (raw inserts), run in its lane as they are. */
export interface LaneRunner {
  /** Whether work of `lane` beginning now runs at its lane's nice value (LaneYielding): for work outside the statements (a conversion). */
  shouldYield(lane: Lane): boolean;
  inLane<R>(
    kind: 'write' | 'ingest',
    opts: StatementOptions | undefined,
    work: (client: ClickHouseClient, settings: ClickHouseSettings, slot: number) => Promise<R>,
  ): Promise<R>;
}

/**
 * What the statements run on: each lane's turns and connections, its settings, and how a
 * running statement is stopped (connection.ts builds one per mode).
 */
export interface LaneEngine {
  turns: Record<Lane, LaneTurns>;
  /** The client of a lane's connection `slot` (embedded: a chDB connection of its own; server: one client for all). */
  clientFor(lane: Lane, slot: number): ClickHouseClient;
  options: LaneOptions;
  /**
   * Stops the running statement whose log_comment is `tag`. Embedded: a KILL QUERY on a
   * connection of its own (the statement's connection is busy with it). Server: aborting the
   * request closes it and the server cancels the read (`cancel_http_readonly_queries_on_client_close`).
   */
  cancel?(tag: string): Promise<void>;
  /** Added to every statement's settings (server mode's cancel-on-close). */
  settings?: ClickHouseSettings;
}

/** What a statement does, for the lane it runs in when nothing names one. */
type StatementKind = 'read' | 'write' | 'ingest';

/** Per-process sequence that makes every running statement's log_comment unique (its cancel handle). */
let sequence = 0;

/** The failure message for a statement its lane's cap stopped: what to narrow, which variable raises it. */
function limitMessage(lane: Lane, type: string | undefined, opts: LaneOptions): string | undefined {
  const narrow = 'narrow it: a shorter time range, a filter on op, status or a field, or fewer groups';
  if (type === 'TIMEOUT_EXCEEDED' && opts.maxSeconds[lane] > 0)
    return `the query ran past the ${lane} lane's time cap of ${opts.maxSeconds[lane]} s (WEFT_LANE_MAX_SECONDS); ${narrow}`;
  if (type === 'MEMORY_LIMIT_EXCEEDED' && opts.maxMemoryMb[lane] > 0)
    return `the query needed more than the ${lane} lane's memory cap of ${opts.maxMemoryMb[lane]} MiB (WEFT_LANE_MAX_MEMORY_MB); ${narrow}`;
  if ((type === 'TOO_MANY_ROWS' || type === 'TOO_MANY_ROWS_OR_BYTES') && opts.maxRows[lane] > 0)
    return `the query would read more than the ${lane} lane's cap of ${opts.maxRows[lane]} rows (WEFT_LANE_MAX_ROWS); ${narrow}`;
  return undefined;
}

/**
 * The statements over the lanes (the same for both connections: chDB is the client's connection
 * embedded). A statement runs in `opts.lane`, else the lane of the work it runs for (the
 * request's route, a worker's pass: @weft/core statementContext), else interactive (ingest for
 * insertRaw); a read also takes that work's signal, so a request whose client left cancels its
 * statements. Writes are never cancelled by the context: a batch may be shared by many callers.
 */
export function statementsOf(engine: LaneEngine): StoreStatements & LaneRunner {
  const laneSettingsOf = Object.fromEntries(
    LANES.map((lane) => [lane, { ...engine.settings, ...laneSettings(lane, engine.options) }]),
  ) as Record<Lane, ClickHouseSettings>;
  // The same, at the process's own priority: said explicitly, as a chDB session keeps the last value set.
  const unnicedSettingsOf = Object.fromEntries(
    LANES.map((lane) => {
      const s = laneSettingsOf[lane];
      return [lane, s.os_thread_priority === undefined ? s : { ...s, os_thread_priority: '0' }];
    }),
  ) as Record<Lane, ClickHouseSettings>;
  const yielding = new LaneYielding(engine.options, engine.turns);
  const inFlight = new Set<{ tag: string }>();
  const placeOf = (kind: StatementKind, opts: StatementOptions | undefined) => {
    const ctx = statementContext();
    const lane: Lane = opts?.lane ?? (kind === 'ingest' ? 'ingest' : (ctx.lane ?? 'interactive'));
    const signal = opts?.signal ?? (kind === 'read' ? ctx.signal : undefined);
    // Work someone asked for (a request's, a worker's, an insert): whom other lanes yield to. A
    // statement of no work (a request's key lookup before its route) runs as interactive but asks no one to yield.
    const asked = opts?.lane !== undefined || ctx.lane !== undefined || kind === 'ingest';
    return { lane, signal, asked };
  };

  /** One statement in its lane: a turn on a connection, its settings and tag, cancellation while it runs. */
  interface Running {
    client: ClickHouseClient;
    settings: ClickHouseSettings;
    signal?: AbortSignal;
    lane: Lane;
    slot: number;
    /** Gives the turn back; `endedWell`: the statement ran to its end (not failed, cancelled or left early). */
    done(endedWell: boolean): Promise<void>;
  }
  const begin = async (kind: StatementKind, opts: StatementOptions | undefined): Promise<Running> => {
    const { lane, signal, asked } = placeOf(kind, opts);
    if (signal?.aborted) {
      metrics.laneCancelled.inc({ lane });
      throw abandonedError(`before it ran in the ${lane} lane`);
    }
    const turn = await engine.turns[lane].acquire(signal);
    const yielded = yielding.shouldYield(lane);
    const settings = yielded ? laneSettingsOf[lane] : unnicedSettingsOf[lane];
    if (laneSettingsOf[lane].os_thread_priority !== undefined) metrics.laneYielded.inc({ lane, yielded: yielded ? 'yes' : 'no' });
    if (asked) yielding.begin(lane);
    // Embedded, the tag is the statement's cancel handle, so unique; a server cancels by the request (the name alone).
    const tag = engine.cancel ? `${opts?.name ?? 'unnamed'} #${++sequence}` : (opts?.name ?? 'unnamed');
    const entry = { tag };
    inFlight.add(entry);
    let ended = false;
    let cancelled = false;
    let cancelling: Promise<void> | undefined;
    const onAbort = () => {
      metrics.laneCancelled.inc({ lane });
      cancelled = true;
      if (engine.cancel) cancelling = cancelUntilEnded(tag, () => ended);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const client = engine.clientFor(lane, turn.slot);
    return {
      client,
      settings: { ...settings, ...opts?.settings, log_comment: tag },
      // A server is stopped by aborting the request; embedded, the connection is kept until the engine ends the killed statement.
      signal: engine.cancel ? undefined : signal,
      lane,
      slot: turn.slot,
      done: async (endedWell) => {
        ended = true;
        signal?.removeEventListener('abort', onAbort);
        try {
          // No kill of this statement may still be on its way when the connection runs the next
          // one: that one's first statements still carry this tag (a session keeps its log_comment).
          await cancelling;
          // chDB lists a statement that did not end well (killed, past a cap, failed, left early) as
          // running until its connection runs the next one — and the engine's `priority` pauses
          // every statement of a later lane while it is listed: on a quiet server, for good.
          if ((cancelled || !endedWell) && engine.cancel)
            await client.query({ query: 'SELECT 1', format: 'CSV' }).then(
              (r) => r.close(),
              () => undefined,
            );
        } finally {
          inFlight.delete(entry);
          turn.release();
        }
      },
    };
  };

  /**
   * Kills the statement until it has ended: an abort that lands between the turn and the engine
   * listing the statement finds nothing to kill the first time.
   */
  const cancelUntilEnded = async (tag: string, ended: () => boolean) => {
    for (let attempt = 0; attempt < 8 && !ended(); attempt++) {
      await engine.cancel!(tag).catch(() => undefined);
      // The next attempt after a growing pause, which ends early once the statement has.
      const until = performance.now() + 25 * 2 ** Math.min(attempt, 4);
      while (!ended() && performance.now() < until) await new Promise((r) => setTimeout(r, 10));
    }
  };

  /** The StoreError (or, for a lane's cap, the LimitExceededError) for what a statement threw. */
  const failure = (e: unknown, lane: Lane | undefined, opts: StatementOptions | undefined, signal: AbortSignal | undefined): Error => {
    // The lane's own refusal (its queue bound) stays as it is: 503 + Retry-After at the edge.
    if (isRetryable(e)) return e;
    const err = toStoreError(e, opts?.name, signal);
    // The engine's error name, or (chDB's bound statements give only the text) read from its message.
    const type =
      err.type ??
      (/Timeout exceeded: elapsed/.test(err.message)
        ? 'TIMEOUT_EXCEEDED'
        : /Memory limit \(for query\) exceeded/.test(err.message)
          ? 'MEMORY_LIMIT_EXCEEDED'
          : undefined);
    const message = lane && (err.kind === 'unavailable' || type !== undefined) ? limitMessage(lane, type, engine.options) : undefined;
    if (message && lane) {
      metrics.laneRefused.inc({ lane, reason: 'cap' });
      return Object.assign(new LimitExceededError(message), { cause: err });
    }
    return err;
  };
  const outcomeOf = (e: Error) => (e instanceof StoreError ? e.kind : isRetryable(e) ? 'refused' : 'limit');

  const run = async <R>(kind: StatementKind, opts: StatementOptions | undefined, work: (r: Running) => Promise<R>): Promise<R> => {
    const started = performance.now();
    const statement = opts?.name ?? 'unnamed';
    let running: Running | undefined;
    let endedWell = false;
    try {
      running = await begin(kind, opts);
      const result = await work(running);
      endedWell = true;
      metrics.storeStatementSeconds.observe({ statement, outcome: 'ok' }, (performance.now() - started) / 1000);
      return result;
    } catch (e) {
      const err = failure(e, running?.lane, opts, placeOf(kind, opts).signal);
      metrics.storeStatementSeconds.observe({ statement, outcome: outcomeOf(err) }, (performance.now() - started) / 1000);
      throw err;
    } finally {
      await running?.done(endedWell);
    }
  };
  /** A SELECT's answer as JSONEachRow rows, read whole (rows) or as they come (streamRows). */
  const jsonRows = (sql: string, params: StatementParams | undefined, r: Running) =>
    r.client.query({ query: sql, query_params: params, format: 'JSONEachRow', clickhouse_settings: r.settings, abort_signal: r.signal });
  const rows = <T>(sql: string, params?: StatementParams, opts?: StatementOptions): Promise<T[]> =>
    run('read', opts, async (r) => (await jsonRows(sql, params, r)).json<T>());
  /** A stream's statement: timed and classified like the others, its turn held from its start to its last chunk. */
  const streamed = async function* <R>(
    opts: StatementOptions | undefined,
    chunks: (r: Running) => Promise<AsyncIterable<R>>,
  ): AsyncGenerator<R> {
    const started = performance.now();
    const statement = opts?.name ?? 'unnamed';
    let outcome = 'ok';
    let running: Running | undefined;
    let endedWell = false;
    try {
      running = await begin('read', opts);
      // Leaving the loop early returns the client's stream iterator, which destroys the response.
      for await (const chunk of await chunks(running)) yield chunk;
      endedWell = true;
    } catch (e) {
      const err = failure(e, running?.lane, opts, placeOf('read', opts).signal);
      outcome = outcomeOf(err);
      throw err;
    } finally {
      await running?.done(endedWell);
      // Also when the caller left the loop early (the statement then ended well, as far as it went).
      metrics.storeStatementSeconds.observe({ statement, outcome }, (performance.now() - started) / 1000);
    }
  };
  return {
    shouldYield: (lane) => yielding.shouldYield(lane),
    running: () => [...inFlight].map((e) => e.tag),
    // One lane's turns may serve several lanes (WEFT_LANES=one): each counted once.
    busy: (lanes) => [...new Set(lanes.map((l) => engine.turns[l]))].reduce((n, t) => n + t.load.running + t.load.queued, 0),
    rows,
    row: async <T>(sql: string, params?: StatementParams, opts?: StatementOptions) => (await rows<T>(sql, params, opts))[0],
    streamRows: async function* <T>(sql: string, params?: StatementParams, opts?: StatementOptions): AsyncGenerator<T> {
      const blocks = streamed(opts, async (r) => (await jsonRows(sql, params, r)).stream<T>());
      for await (const block of blocks) for (const row of block) yield row.json<T>();
    },
    streamRaw: (sql, params, opts) =>
      streamed(opts, async (r) => {
        // exec: the answer's bytes untouched (query() would decode them into rows).
        const rs = await r.client.exec({
          query: `${sql}\nFORMAT ${opts.format}`,
          query_params: params,
          clickhouse_settings: r.settings,
          abort_signal: r.signal,
        });
        return rs.stream as AsyncIterable<Buffer>;
      }),
    command: (sql, params, opts) =>
      run('write', opts, async (r) => {
        await r.client.command({ query: sql, query_params: params, clickhouse_settings: r.settings, abort_signal: r.signal });
      }),
    insertRows: (table, values, opts) =>
      values.length === 0
        ? Promise.resolve()
        : run('write', opts, async (r) => {
            await r.client.insert({ table, values: values as object[], format: 'JSONEachRow', clickhouse_settings: r.settings });
          }),
    inLane: (kind, opts, work) => run(kind, opts, (r) => work(r.client, r.settings, r.slot)),
  };
}
