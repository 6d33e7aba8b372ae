import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { microsToIso, nowMicros } from '@weft/core';
import { runCancels, runHolder, runOwner, staleRuns, writeRunBeats, writeRunCancel, type RunKey } from '@weft/objects';
import type { Store } from '@weft/store';

export type { RunKey };

/** A run is another process's while its heartbeat is younger than this many heartbeat intervals. */
const STALE_AFTER_BEATS = 6;

/**
 * Which process runs each server-side evaluation, its heartbeats, its end, and cancellations
 * (the evaluation_runs and evaluation_cancels tables, migration 160; their statements are
 * libs/objects' evaluation-runs.ts).
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
    await writeRunBeats(this.store, runs, this.owner, state, microsToIso(nowMicros()));
  }

  /** Runs a stopped process left (interrupted), or still marked running with no heartbeat for a while: a process died with them. */
  async stale(): Promise<RunKey[]> {
    return staleRuns(this.store, this.staleAfterMs);
  }

  /**
   * Takes up a stale run: marks it this process's, then reads who won (two processes may try at
   * once: the later heartbeat wins, and the loser leaves it).
   */
  async claim(run: RunKey): Promise<boolean> {
    await this.beat([run]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    return (await runOwner(this.store, run)) === this.owner;
  }

  /** Who holds the run, and whether it is alive (null: not registered, as runs made before the registry existed). */
  async owns(run: RunKey): Promise<{ owner: string; state: string; fresh: boolean } | null> {
    return runHolder(this.store, run, this.staleAfterMs);
  }

  async cancel(run: RunKey, by: string): Promise<void> {
    await writeRunCancel(this.store, run, by, microsToIso(nowMicros()));
  }

  /** Of these runs, the ones somebody cancelled, with who did. */
  async cancelled(runs: RunKey[]): Promise<Map<string, string>> {
    if (runs.length === 0) return new Map();
    const cancels = await runCancels(this.store, runs);
    return new Map(cancels.map((r) => [runId(r), r.requested_by]));
  }
}

/** One string per run, for maps. */
export const runId = (r: RunKey) => `${r.project_id}\n${r.call_id}`;
