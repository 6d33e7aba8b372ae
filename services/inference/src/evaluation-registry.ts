import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { microsToIso, nowMicros } from '@weft/core';
import { Params } from '@weft/query';
import type { Store } from '@weft/store';

/** A run's identity: its project and the id of its root (Evaluation.evaluate) call. */
export interface RunKey {
  project_id: string;
  call_id: string;
}

/** A run is another process's while its heartbeat is younger than this many heartbeat intervals. */
const STALE_AFTER_BEATS = 6;

/**
 * The evaluation_runs and evaluation_cancels tables (migration 160): which process runs each
 * server-side evaluation, its heartbeats, its end, and cancellations. Every statement on them is here.
 */
export class EvaluationRegistry {
  /** This process, as the owner of the runs it executes. */
  readonly owner = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;

  private readonly staleAfterMs: number;

  constructor(
    private readonly store: Store,
    heartbeatMs: number,
  ) {
    this.staleAfterMs = heartbeatMs * STALE_AFTER_BEATS;
  }

  /** Marks runs as this process's and alive (a new run, a taken-up run, a heartbeat). */
  async beat(runs: RunKey[], state: 'running' | 'interrupted' | 'done' = 'running'): Promise<void> {
    if (runs.length === 0) return;
    const at = microsToIso(nowMicros());
    await this.store.insertRows(
      'evaluation_runs',
      runs.map((r) => ({ ...r, owner: this.owner, state, heartbeat_at: at })),
      { name: 'evaluation_runs.beat' },
    );
  }

  /** Runs a stopped process left (interrupted), or still marked running with no heartbeat for a while: a process died with them. */
  async stale(): Promise<RunKey[]> {
    const p = new Params();
    return this.store.rows<RunKey>(
      `SELECT project_id, call_id FROM evaluation_runs FINAL
        WHERE state = 'interrupted' OR (state = 'running' AND heartbeat_at < now64(6) - toIntervalMillisecond(${p.add(this.staleAfterMs, 'UInt32')}))`,
      p.values,
      { name: 'evaluation_runs.stale' },
    );
  }

  /**
   * Takes up a stale run: marks it this process's, then reads who won (two processes may try at
   * once: the later heartbeat wins, and the loser leaves it).
   */
  async claim(run: RunKey): Promise<boolean> {
    await this.beat([run]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const p = new Params();
    const row = await this.store.row<{ owner: string }>(
      `SELECT owner FROM evaluation_runs FINAL WHERE project_id = ${p.str(run.project_id)} AND call_id = ${p.str(run.call_id)}`,
      p.values,
      { name: 'evaluation_runs.owner' },
    );
    return row?.owner === this.owner;
  }

  /** Who holds the run, and whether it is alive (null: not registered, as runs made before the registry existed). */
  async owns(run: RunKey): Promise<{ owner: string; state: string; fresh: boolean } | null> {
    const p = new Params();
    const row = await this.store.row<{ owner: string; state: string; fresh: number }>(
      `SELECT owner, state, state = 'running' AND heartbeat_at >= now64(6) - toIntervalMillisecond(${p.add(this.staleAfterMs, 'UInt32')}) AS fresh
        FROM evaluation_runs FINAL WHERE project_id = ${p.str(run.project_id)} AND call_id = ${p.str(run.call_id)}`,
      p.values,
      { name: 'evaluation_runs.owns' },
    );
    return row ? { owner: row.owner, state: row.state, fresh: Number(row.fresh) === 1 } : null;
  }

  async cancel(run: RunKey, by: string): Promise<void> {
    await this.store.insertRows('evaluation_cancels', [{ ...run, requested_by: by, requested_at: microsToIso(nowMicros()) }], {
      name: 'evaluation_runs.cancel',
    });
  }

  /** Of these runs, the ones somebody cancelled, with who did. */
  async cancelled(runs: RunKey[]): Promise<Map<string, string>> {
    if (runs.length === 0) return new Map();
    const p = new Params();
    const keys = runs.map((r) => `(${p.str(r.project_id)}, ${p.str(r.call_id)})`).join(', ');
    const cancels = await this.store.rows<RunKey & { requested_by: string }>(
      `SELECT project_id, call_id, any(requested_by) AS requested_by FROM evaluation_cancels
        WHERE (project_id, call_id) IN (${keys}) GROUP BY project_id, call_id`,
      p.values,
      { name: 'evaluation_runs.cancelled' },
    );
    return new Map(cancels.map((r) => [runId(r), r.requested_by]));
  }
}

/** One string per run, for maps. */
export const runId = (r: RunKey) => `${r.project_id}\n${r.call_id}`;
