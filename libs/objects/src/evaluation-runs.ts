import { Params } from '@weft/query';
import type { Store } from '@weft/store';

/**
 * Every statement on the evaluation_runs and evaluation_cancels tables (migration 160): which
 * process runs each server-side evaluation, its heartbeats, its end, and cancellations
 * (services/inference evaluation-registry.ts decides what they mean).
 */

/** A run's identity: its project and the id of its root (Evaluation.evaluate) call. */
export interface RunKey {
  project_id: string;
  call_id: string;
}

/** Marks runs as `owner`'s, in `state`, its heartbeat at `at` (ISO). */
export async function writeRunBeats(
  store: Store,
  runs: RunKey[],
  owner: string,
  state: 'running' | 'interrupted' | 'done',
  at: string,
): Promise<void> {
  await store.insertRows(
    'evaluation_runs',
    runs.map((r) => ({ ...r, owner, state, heartbeat_at: at })),
    { name: 'evaluation_runs.beat' },
  );
}

/** Runs left interrupted, or still marked running with no heartbeat for `staleAfterMs`. */
export async function staleRuns(store: Store, staleAfterMs: number): Promise<RunKey[]> {
  const p = new Params();
  return store.rows<RunKey>(
    `SELECT project_id, call_id FROM evaluation_runs FINAL
        WHERE state = 'interrupted' OR (state = 'running' AND heartbeat_at < now64(6) - toIntervalMillisecond(${p.add(staleAfterMs, 'UInt32')}))`,
    p.values,
    { name: 'evaluation_runs.stale' },
  );
}

/** The owner a run's latest heartbeat names (undefined: not registered). */
export async function runOwner(store: Store, run: RunKey): Promise<string | undefined> {
  const p = new Params();
  const row = await store.row<{ owner: string }>(
    `SELECT owner FROM evaluation_runs FINAL WHERE project_id = ${p.str(run.project_id)} AND call_id = ${p.str(run.call_id)}`,
    p.values,
    { name: 'evaluation_runs.owner' },
  );
  return row?.owner;
}

/** Who holds the run, its state, and whether it runs with a heartbeat younger than `staleAfterMs` (null: not registered). */
export async function runHolder(
  store: Store,
  run: RunKey,
  staleAfterMs: number,
): Promise<{ owner: string; state: string; fresh: boolean } | null> {
  const p = new Params();
  const row = await store.row<{ owner: string; state: string; fresh: number }>(
    `SELECT owner, state, state = 'running' AND heartbeat_at >= now64(6) - toIntervalMillisecond(${p.add(staleAfterMs, 'UInt32')}) AS fresh
        FROM evaluation_runs FINAL WHERE project_id = ${p.str(run.project_id)} AND call_id = ${p.str(run.call_id)}`,
    p.values,
    { name: 'evaluation_runs.owns' },
  );
  return row ? { owner: row.owner, state: row.state, fresh: Number(row.fresh) === 1 } : null;
}

/** Records a cancellation of the run by `by` at `at` (ISO). */
export async function writeRunCancel(store: Store, run: RunKey, by: string, at: string): Promise<void> {
  await store.insertRows('evaluation_cancels', [{ ...run, requested_by: by, requested_at: at }], {
    name: 'evaluation_runs.cancel',
  });
}

/** Of these runs, the ones somebody cancelled, with who did (any one, when several did). */
export async function runCancels(store: Store, runs: RunKey[]): Promise<(RunKey & { requested_by: string })[]> {
  const p = new Params();
  const keys = runs.map((r) => `(${p.str(r.project_id)}, ${p.str(r.call_id)})`).join(', ');
  return store.rows<RunKey & { requested_by: string }>(
    `SELECT project_id, call_id, any(requested_by) AS requested_by FROM evaluation_cancels
        WHERE (project_id, call_id) IN (${keys}) GROUP BY project_id, call_id`,
    p.values,
    { name: 'evaluation_runs.cancelled' },
  );
}
