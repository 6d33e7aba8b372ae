import { type Logger, metrics } from '@weft/core';
import { ALERT_RETENTION, FEEDBACK_RETENTION, listProjectSetting } from '@weft/objects';
import { CALL_RETENTION, countExpiredRows, Params, removeExpiredRows, type RetentionCutoffs } from '@weft/query';
import { PeriodicComponent } from '@weft/runtime';
import type { Store } from '@weft/store';

const DAY_MS = 86_400_000;

/** The tables a pass removes from, in order: feedback first, through the calls it hangs on. */
const RETENTION_TABLES = [FEEDBACK_RETENTION, ...CALL_RETENTION];

export interface RetentionOptions {
  /** Days kept for projects that set no retention of their own (undefined: forever). */
  defaultDays?: number;
  /**
   * Days alert events, deliveries and delivery attempts are kept (WEFT_ALERTS_RETENTION_DAYS),
   * or fewer when the project keeps its calls fewer; undefined: as long as the project's calls.
   */
  alertDays?: number;
  /** Time between two passes (ms). */
  intervalMs: number;
  /** The clock (tests move it). */
  now?: () => number;
}

/**
 * Retention: every `intervalMs`, the calls (and their feedback) older than their project's
 * retention leave the store, and the alerts' history (events, deliveries, attempts) older than
 * `alertDays` or than the project's retention, whichever is shorter. One pass is at most one physical delete (physicalDeleteStatement) per table for all
 * projects together, issued only when a count finds expired rows: the engine rewrites the parts
 * that hold them (streaming, part by part), and nothing is left masked on disk. Passes never
 * overlap and run in the background lane; a failed one is logged and retried at the next
 * interval (PeriodicWorker, @weft/runtime).
 */
export class RetentionSweeper extends PeriodicComponent {
  constructor(
    private readonly store: Store,
    private readonly log: Logger,
    private readonly opts: RetentionOptions,
  ) {
    super({
      name: 'retention',
      intervalMs: opts.intervalMs,
      log,
      failure: { level: 'error', message: 'retention pass failed; retried at the next interval' },
    });
  }

  /** The cutoffs of the calls' tables, and of the alert tables (ALERT_RETENTION). */
  private async cutoffs(): Promise<{ calls: RetentionCutoffs; alerts: RetentionCutoffs }> {
    const now = (this.opts.now ?? Date.now)();
    const cutoff = (days: number) => (now - days * DAY_MS) * 1000;
    const settings = await listProjectSetting(this.store, 'retention_days');
    const own = settings.flatMap((s) => (typeof s.value === 'number' ? [{ projectId: s.project_id, days: s.value }] : []));
    const forever = settings.filter((s) => s.value === null).map((s) => s.project_id);
    const calls: RetentionCutoffs = {
      projects: own.map((r) => ({ projectId: r.projectId, cutoffUs: cutoff(r.days) })),
      keepForever: forever,
      defaultCutoffUs: this.opts.defaultDays === undefined ? undefined : cutoff(this.opts.defaultDays),
    };
    // An alert's history is kept alertDays, and never longer than its project keeps its calls.
    const { alertDays } = this.opts;
    if (alertDays === undefined) return { calls, alerts: calls };
    const shorter = (days: number | undefined) => cutoff(Math.min(alertDays, days ?? Infinity));
    const alerts: RetentionCutoffs = {
      projects: [
        ...own.map((r) => ({ projectId: r.projectId, cutoffUs: shorter(r.days) })),
        ...forever.map((projectId) => ({ projectId, cutoffUs: cutoff(alertDays) })),
      ],
      keepForever: [],
      defaultCutoffUs: shorter(this.opts.defaultDays),
    };
    return { calls, alerts };
  }

  /** One pass: rows removed per table. */
  protected async runPass(): Promise<void> {
    const c = await this.cutoffs();
    const removed: Record<string, number> = {};
    const tables = [...RETENTION_TABLES.map((t) => ({ t, c: c.calls })), ...ALERT_RETENTION.map((t) => ({ t, c: c.alerts }))];
    for (const { t, c: cutoffs } of tables) {
      const { table, expired } = t;
      const p = new Params();
      const where = expired(cutoffs, p);
      if (!where) continue; // no project keeps less than forever
      const n = await countExpiredRows(this.store, table, where, p.values);
      if (n === 0) continue;
      await removeExpiredRows(this.store, table, where, p.values);
      removed[table] = n;
      metrics.retentionRowsRemoved.inc({ table }, n);
    }
    if (Object.keys(removed).length) this.log.info({ removed }, 'retention: expired calls, feedback and alert history removed');
  }
}
