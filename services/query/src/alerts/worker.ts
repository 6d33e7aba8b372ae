import { createHash } from 'node:crypto';
import { mapConcurrently, metrics, microsToClickHouse, nowMicros, type Logger } from '@weft/core';
import { objectsOfClass, queryObjects } from '@weft/objects';
import { PeriodicComponent } from '@weft/runtime';
import type { Store } from '@weft/store';
import { plainVal, readAlertRule, type AlertRule } from './alert-spec';
import { AlertLease } from './lease';
import { measureAll, nextState, type Measure } from './measure';
import { channelBody, retryDelayMs, send, type AlertNotification } from './notify';
import type { UrlPolicy } from './url-guard';
import {
  activeMutes,
  allStates,
  channelsByIds,
  channelsFor,
  dueDeliveries,
  eventsByIds,
  eventsWithDeliveries,
  existingEvents,
  insertEvents,
  logAttempts,
  writeDeliveries,
  writeStates,
  RECENT_FIGURES,
  type AlertStateName,
  type ChannelRow,
  type DeliveryRow,
  type StateRow,
} from '@weft/objects';

export interface AlertWorkerOptions {
  /** Time between two passes (WEFT_ALERTS_INTERVAL_MS). */
  intervalMs: number;
  /** Resolves once the writes acknowledged so far are stored (the all-in-one's ingest log). */
  caughtUp?: () => Promise<void>;
  /** The addresses deliveries may connect to (WEFT_ALERTS_ALLOW_PRIVATE_URLS, url-guard.ts). */
  urlPolicy: UrlPolicy;
}

/** A change of state found by a pass, recorded with the pass's others. */
interface Transition {
  rule: AlertRule;
  state: 'firing' | 'resolved';
  m: Measure;
  /** The alert's transition number (its event's id derives from it). */
  n: number;
  muted: boolean;
  row: Omit<StateRow, 'evaluated_at'>;
}

/** A notification not delivered within this long after its transition is given up (marked failed). */
export const DELIVERY_MAX_AGE_MS = 24 * 3600_000;
/** Failed deliveries are retried at most this far apart (and at most ten intervals apart). */
const RETRY_CAP_MS = 5 * 60_000;
/** Deliveries sent at once. */
const SEND_CONCURRENCY = 8;
/** Deliveries read from the outbox per round: few enough that a round of receivers all timing out (10 s each) ends well within a lease. */
const OUTBOX_BATCH = 40;

/**
 * The alert worker (docs/alerts.md): every interval, the process holding the lease (lease.ts)
 * evaluates every project's AlertSpecs (their latest live versions) over their windows,
 * records each transition (ok → firing → resolved, hysteresis in measure.ts) as an event with one
 * pending delivery per channel of the project (the outbox, in the store), then sends what the
 * outbox holds that is due, retrying failures with back-off for DELIVERY_MAX_AGE_MS.
 *
 * Crash safety: an event's id is derived from the alert and its transition's number, and the
 * state (with that number) is written after the event and its deliveries; a pass that dies in
 * between makes the same transition again next time, finds the event, and adds only what is
 * missing. A delivery is marked sent after the receiver's 2xx, so a process killed between the
 * two sends it again (at least once; the `X-Weft-Event-Id` header lets a receiver drop a repeat).
 */
export class AlertWorker extends PeriodicComponent {
  private readonly lease: AlertLease;
  private readonly retryCapMs: number;

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
    private readonly opts: AlertWorkerOptions,
  ) {
    super({
      name: 'alerts',
      intervalMs: opts.intervalMs,
      log,
      failure: { level: 'error', message: 'alerts: a pass failed; tried again at the next interval' },
    });
    this.lease = new AlertLease(store, opts.intervalMs);
    this.retryCapMs = Math.max(1000, Math.min(RETRY_CAP_MS, opts.intervalMs * 10));
  }

  protected async runPass(): Promise<void> {
    // Nothing to evaluate or send: no lease written, and no wait for the writes acknowledged so
    // far (that wait makes the ingest log store them now, which a project with no alerts does
    // not need).
    const rules = await this.rules();
    if (rules.length === 0 && (await dueDeliveries(this.store, 1)).length === 0) return;
    if (!(await this.lease.hold())) return;
    if (rules.length) {
      await this.opts.caughtUp?.();
      const timer = metrics.alertPassSeconds.startTimer();
      await this.evaluateAll(rules);
      timer();
    }
    if (!this.stopping) await this.deliverDue();
  }

  /** Every live AlertSpec's latest version, read into rules (those weft cannot evaluate are skipped). */
  private async rules(): Promise<AlertRule[]> {
    const projects = new Set((await objectsOfClass(this.store, 'AlertSpec', 'alerts.specs')).map((o) => o.project_id));
    const out: AlertRule[] = [];
    for (const project_id of projects) {
      const objs = await queryObjects(this.store, { project_id, filter: { base_object_classes: ['AlertSpec'], latest_only: true } });
      for (const o of objs) {
        const read = readAlertRule(project_id, o.object_id, o.digest, plainVal(o.val) as Record<string, unknown>);
        if (read.ok) out.push(read.rule);
      }
    }
    return out;
  }

  private async evaluateAll(rules: AlertRule[]): Promise<void> {
    const states = await allStates(this.store);
    const mutes = await activeMutes(this.store);
    const unchanged: Omit<StateRow, 'evaluated_at'>[] = [];
    const transitions: Transition[] = [];
    // Every figure first, many alerts per statement (measure.ts measureAll), then each alert's
    // next state as before; the pass's transitions are then recorded together.
    const measures = await measureAll(
      this.store,
      rules,
      Date.now(),
      async () => !this.stopping && (await this.lease.keep()),
      (err, alerts) => this.log.warn({ err, alerts }, 'alerts: a batch of alerts could not be measured together; measured one by one'),
    );
    for (const rule of rules) {
      if (this.stopping) break;
      if (!(await this.lease.keep())) return;
      const key = `${rule.projectId}\n${rule.name}`;
      const prev = states.get(key) ?? { state: 'ok' as AlertStateName, transitions: 0, recent: [] };
      const m: Measure | Error | undefined = measures.get(rule);
      if (m === undefined) continue;
      if (m instanceof Error) {
        this.log.warn({ err: m, alert: rule.ref }, 'alerts: an alert could not be evaluated');
        continue;
      }
      const next = nextState(prev.state, m.value, rule);
      const recent = m.value === null ? prev.recent : [...prev.recent, m.value].slice(-RECENT_FIGURES);
      const row = {
        recent,
        project_id: rule.projectId,
        alert: rule.name,
        state: next,
        transitions: prev.transitions,
        value: m.value,
        calls: m.calls,
      };
      if (next === prev.state || m.value === null || next === 'ok') {
        unchanged.push(row);
        continue;
      }
      transitions.push({ rule, state: next, m, n: prev.transitions + 1, muted: mutes.has(key), row });
    }
    if (transitions.length) {
      // Fencing: a process that lost the lease mid-pass records nothing more.
      if (!(await this.lease.stillHeld())) return;
      await this.recordTransitions(transitions);
      await writeStates(
        this.store,
        transitions.map((t) => ({ ...t.row, transitions: t.n })),
      );
      for (const t of transitions) {
        metrics.alertTransitions.inc({ state: t.state });
        this.log.info(
          { alert: t.rule.ref, state: t.state, value: t.m.value, threshold: t.rule.threshold },
          `alerts: ${t.rule.name} is ${t.state}`,
        );
      }
    }
    if (unchanged.length && (await this.lease.keep())) await writeStates(this.store, unchanged);
  }

  /**
   * The transitions' events, and their deliveries unless muted: whatever of them a previous try
   * did not write (a few statements for the whole pass, not a few per transition; the states are
   * written after them).
   */
  private async recordTransitions(transitions: Transition[]): Promise<void> {
    const events = transitions.map((t) => {
      const id = eventIdOf(t.rule.projectId, t.rule.name, t.n);
      return { t, id, key: { project_id: t.rule.projectId, id } };
    });
    const stored = await existingEvents(
      this.store,
      events.map((e) => e.key),
    );
    const missing = events.filter((e) => !stored.has(`${e.key.project_id}\n${e.id}`));
    if (missing.length) {
      await insertEvents(
        this.store,
        missing.map(({ t, id }) => ({
          project_id: t.rule.projectId,
          alert: t.rule.name,
          id,
          alert_ref: t.rule.ref,
          state: t.state,
          value: t.m.value ?? 0,
          threshold: t.rule.threshold,
          muted: t.muted ? 1 : 0,
          body: JSON.stringify(notificationOf(t.rule, id, t.state, t.m)),
        })),
      );
    }
    const delivered = events.filter((e) => !e.t.muted);
    if (delivered.length === 0) return;
    const channelsOf = new Map<string, ChannelRow[]>();
    for (const project of new Set(delivered.map((e) => e.t.rule.projectId)))
      channelsOf.set(project, await channelsFor(this.store, project));
    const withDeliveries = await eventsWithDeliveries(
      this.store,
      delivered.map((e) => e.key),
    );
    const at = microsToClickHouse(nowMicros());
    const rows = delivered
      .filter((e) => !withDeliveries.has(`${e.key.project_id}\n${e.id}`))
      .flatMap(({ t, id }) =>
        channelsOf.get(t.rule.projectId)!.map((c) => ({
          project_id: t.rule.projectId,
          event_id: id,
          channel_id: c.id,
          alert: t.rule.name,
          status: 'pending' as const,
          attempts: 0,
          next_attempt_at: at,
          last_code: null,
          last_error: null,
          created_at: at,
        })),
      );
    if (rows.length) await writeDeliveries(this.store, rows);
  }

  /** Sends the outbox's due deliveries, a batch at a time, until none is due. */
  private async deliverDue(): Promise<void> {
    for (;;) {
      const due = await dueDeliveries(this.store, OUTBOX_BATCH);
      if (due.length === 0 || this.stopping) return;
      if (!(await this.lease.stillHeld())) return;
      const events = await eventsByIds(
        this.store,
        due.map((d) => ({ project_id: d.project_id, id: d.event_id })),
      );
      const channels = await channelsByIds(
        this.store,
        due.map((d) => ({ project_id: d.project_id, id: d.channel_id })),
      );
      const results = await mapConcurrently(due, SEND_CONCURRENCY, async (d) => {
        const event = events.get(`${d.project_id}\n${d.event_id}`);
        const channel = channels.get(`${d.project_id}\n${d.channel_id}`);
        if (!event || !channel)
          return { ok: false, status_code: null, error: channel ? 'the event is gone' : 'the channel was deleted', final: true };
        const r = await send(channel, d.event_id, channelBody(channel, JSON.parse(event.body) as AlertNotification), this.opts.urlPolicy);
        // An address the policy refuses is not tried again (the log says why).
        return { ...r, final: r.refused === true };
      });
      const nowUs = nowMicros();
      const updated: Omit<DeliveryRow, 'updated_at'>[] = due.map((d, i) => {
        const r = results[i]!;
        const attempts = Number(d.attempts) + 1;
        const tooOld = nowUs / 1000 - Date.parse(`${d.created_at.replace(' ', 'T')}Z`) > DELIVERY_MAX_AGE_MS;
        const status = r.ok ? 'sent' : r.final || tooOld ? 'failed' : 'pending';
        return {
          ...d,
          status,
          attempts,
          next_attempt_at: microsToClickHouse(nowUs + retryDelayMs(attempts, this.retryCapMs) * 1000),
          last_code: r.status_code,
          last_error: r.error,
        };
      });
      await logAttempts(
        this.store,
        due.map((d, i) => ({
          project_id: d.project_id,
          event_id: d.event_id,
          channel_id: d.channel_id,
          alert: d.alert,
          attempt: updated[i]!.attempts,
          ok: results[i]!.ok ? 1 : 0,
          code: results[i]!.status_code,
          error: results[i]!.error,
        })),
      );
      await writeDeliveries(this.store, updated);
      for (const [i, d] of due.entries()) {
        metrics.alertDeliveries.inc({
          outcome: updated[i]!.status === 'sent' ? 'sent' : updated[i]!.status === 'failed' ? 'failed' : 'retry',
        });
        if (!results[i]!.ok)
          this.log.warn({ alert: d.alert, channel: d.channel_id, error: results[i]!.error }, 'alerts: a delivery failed');
      }
    }
  }
}

/** The same (project, alert, transition number) always names the same event. */
function eventIdOf(projectId: string, alert: string, n: number): string {
  const h = createHash('sha256').update(`${projectId}\n${alert}\n${n}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export function notificationOf(rule: AlertRule, id: string, state: AlertNotification['state'], m: Measure): AlertNotification {
  const [entity, project] = rule.projectId.split('/');
  const op = rule.source.kind === 'calls' ? rule.source.opNames[0] : undefined;
  const view = rule.source.kind === 'monitor' ? 'monitors' : 'calls';
  return {
    id,
    state,
    alert: rule.name,
    alert_ref: rule.ref,
    project_id: rule.projectId,
    value: m.value,
    threshold: rule.threshold,
    comparison_operator: rule.comparison,
    aggregation: rule.aggregation,
    metric_path: rule.metricPath,
    window: { size: rule.windowSize, duration_seconds: rule.windowDuration, calls: m.calls },
    calls_link: `/#/p/${encodeURIComponent(entity!)}/${encodeURIComponent(project!)}/${view}${op ? `?op=${encodeURIComponent(op)}` : ''}`,
    time: new Date().toISOString(),
    description: rule.description,
  };
}
