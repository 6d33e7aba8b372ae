import { type Logger, metrics } from '@weft/core';
import { FEEDBACK_RETENTION, listProjectSetting } from '@weft/objects';
import { CALL_RETENTION, countExpiredRows, Params, removeExpiredRows, type RetentionCutoffs } from '@weft/query';
import { PeriodicWorker } from '@weft/runtime';
import type { Store } from '@weft/store';

const DAY_MS = 86_400_000;

/** The tables a pass removes from, in order: feedback first, through the calls it hangs on. */
const RETENTION_TABLES = [FEEDBACK_RETENTION, ...CALL_RETENTION];

export interface RetentionOptions {
  /** Days kept for projects that set no retention of their own (undefined: forever). */
  defaultDays?: number;
  /** Time between two passes (ms). */
  intervalMs: number;
  /** The clock (tests move it). */
  now?: () => number;
}

/**
 * Retention: every `intervalMs`, the calls (and their feedback) older than their project's
 * retention leave the store. One pass is at most one physical delete (physicalDeleteStatement) per table for all
 * projects together, issued only when a count finds expired rows: the engine rewrites the parts
 * that hold them (streaming, part by part), and nothing is left masked on disk. Passes never
 * overlap and run in the background lane; a failed one is logged and retried at the next
 * interval (PeriodicWorker, @weft/runtime).
 */
export class RetentionSweeper {
  private readonly worker: PeriodicWorker;

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
    private readonly opts: RetentionOptions,
  ) {
    this.worker = new PeriodicWorker(() => this.sweep(), {
      name: 'retention',
      intervalMs: opts.intervalMs,
      log,
      failure: { level: 'error', message: 'retention pass failed; retried at the next interval' },
    });
  }

  start(): void {
    this.worker.start();
  }

  stop(): Promise<void> {
    return this.worker.stop();
  }

  /** One pass now (or the one running): rows removed per table. */
  pass(): Promise<void> {
    return this.worker.pass();
  }

  private async cutoffs(): Promise<RetentionCutoffs> {
    const now = (this.opts.now ?? Date.now)();
    const cutoff = (days: number) => (now - days * DAY_MS) * 1000;
    const settings = await listProjectSetting(this.store, 'retention_days');
    return {
      projects: settings.flatMap((s) => (typeof s.value === 'number' ? [{ projectId: s.project_id, cutoffUs: cutoff(s.value) }] : [])),
      keepForever: settings.filter((s) => s.value === null).map((s) => s.project_id),
      defaultCutoffUs: this.opts.defaultDays === undefined ? undefined : cutoff(this.opts.defaultDays),
    };
  }

  private async sweep(): Promise<void> {
    const c = await this.cutoffs();
    const removed: Record<string, number> = {};
    for (const { table, expired } of RETENTION_TABLES) {
      const p = new Params();
      const where = expired(c, p);
      if (!where) return; // no project keeps less than forever
      const n = await countExpiredRows(this.store, table, where, p.values);
      if (n === 0) continue;
      await removeExpiredRows(this.store, table, where, p.values);
      removed[table] = n;
      metrics.retentionRowsRemoved.inc({ table }, n);
    }
    if (Object.keys(removed).length) this.log.info({ removed }, 'retention: expired calls and feedback removed');
  }
}
