import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The engine's lanes: every statement runs in one, so a dashboard or an export never makes a
 * calls page wait (docs/operations.md, "Lanes"):
 *   ingest      — the writer stage's inserts;
 *   interactive — calls pages, a trace, counts, threads, objects, feedback: what a person waits for;
 *   heavy       — analytics, exports, searches, long streams, dashboards;
 *   background  — facts, retention, deletions, monitors, evaluations, replays: yields to the rest.
 */
export const LANES = ['ingest', 'interactive', 'heavy', 'background'] as const;
export type Lane = (typeof LANES)[number];

/** What a statement inherits from the work it runs for (a request, a worker's pass). */
export interface StatementContext {
  lane?: Lane;
  /** Aborted when the request's client went away: the statement is cancelled in the engine. */
  signal?: AbortSignal;
}

const current = new AsyncLocalStorage<StatementContext>();

/** Runs `work` with its statements in `lane` (and `signal`, when given), unless a statement says otherwise. */
export function inLane<R>(lane: Lane, work: () => R, signal?: AbortSignal): R {
  const outer = current.getStore();
  return current.run({ lane, signal: signal ?? outer?.signal }, work);
}

/** The context of the work running now (empty outside any request or worker pass). */
export function statementContext(): StatementContext {
  return current.getStore() ?? {};
}
