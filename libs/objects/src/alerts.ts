import { clickHouseToIso, microsToClickHouse, nowMicros } from '@weft/core';
import { expiredRowsSql, Params, type RetentionTable } from '@weft/query';
import type { Store } from '@weft/store';

/**
 * Every statement on the alert tables (migration 210): channels, states, events, the outbox of
 * deliveries and its attempts, mutes, the worker's lease; and the figure of an alert's window.
 * The alert rules are AlertSpec objects (objects.ts); the query role's alerts (services/query
 * src/alerts) decide what to do with these.
 */

export type ChannelFormat = 'json' | 'slack';
export interface ChannelRow {
  project_id: string;
  id: string;
  name: string;
  url: string;
  format: ChannelFormat;
  secret: string;
  created_at: string;
}

export type AlertStateName = 'ok' | 'firing' | 'resolved';
export interface StateRow {
  project_id: string;
  alert: string;
  state: AlertStateName;
  transitions: number;
  value: number | null;
  /** The last figures, oldest first (RECENT_FIGURES at most). */
  recent: number[];
  calls: number;
  evaluated_at: string;
}

/** Figures kept per alert for the UI's sparkline. */
export const RECENT_FIGURES = 60;

export interface EventRow {
  project_id: string;
  alert: string;
  id: string;
  alert_ref: string;
  state: 'firing' | 'resolved';
  value: number;
  threshold: number;
  muted: number;
  body: string;
  created_at: string;
}

export type DeliveryStatus = 'pending' | 'sent' | 'failed';
export interface DeliveryRow {
  project_id: string;
  event_id: string;
  channel_id: string;
  alert: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: string;
  last_code: number | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
}

/** Times are written in the engine's own text form (UTC), read back as ISO 8601. */
const now = () => microsToClickHouse(nowMicros());
const engineTimeToIso = clickHouseToIso;

// ---- channels ----

export async function insertChannel(store: Store, c: ChannelRow): Promise<void> {
  await store.insertRows('alert_channels', [{ ...c, deleted: 0, updated_at: now() }], { name: 'alerts.channel_create' });
}

/** A project's live channels (with their secrets: callers decide what leaves the process). */
export async function channelsOf(store: Store, projectId: string): Promise<ChannelRow[]> {
  const rows = await store.rows<ChannelRow>(
    `SELECT project_id, id, name, url, format, secret, created_at FROM alert_channels FINAL
      WHERE project_id = {p:String} AND deleted = 0 ORDER BY created_at, id`,
    { p: projectId },
    { name: 'alerts.channels' },
  );
  return rows.map((r) => ({ ...r, created_at: engineTimeToIso(r.created_at) }));
}

/**
 * An entity's channels are kept under the project id `<entity>/*`: they get the transitions of
 * every project of the entity.
 */
export const entityChannelsOf = (projectId: string) => `${projectId.split('/')[0]}/*`;

/** The channels a project's transitions go to: its own and its entity's. */
export async function channelsFor(store: Store, projectId: string): Promise<ChannelRow[]> {
  const [own, entity] = await Promise.all([channelsOf(store, projectId), channelsOf(store, entityChannelsOf(projectId))]);
  return [...own, ...entity];
}

/** Live channels by `project\nid` of the deliveries naming them: the project's own or its entity's. */
export async function channelsByIds(store: Store, keys: { project_id: string; id: string }[]): Promise<Map<string, ChannelRow>> {
  if (keys.length === 0) return new Map();
  const rows = await store.rows<ChannelRow>(
    `SELECT project_id, id, name, url, format, secret, created_at FROM alert_channels FINAL
      WHERE project_id IN {ps:Array(String)} AND id IN {ids:Array(String)} AND deleted = 0`,
    { ps: [...new Set(keys.flatMap((k) => [k.project_id, entityChannelsOf(k.project_id)]))], ids: [...new Set(keys.map((k) => k.id))] },
    { name: 'alerts.channels_by_id' },
  );
  const out = new Map<string, ChannelRow>();
  for (const k of keys) {
    const c = rows.find((r) => r.id === k.id && (r.project_id === k.project_id || r.project_id === entityChannelsOf(k.project_id)));
    if (c) out.set(`${k.project_id}\n${k.id}`, c);
  }
  return out;
}

/** Marks a channel deleted; whether it was there. */
export async function deleteChannel(store: Store, projectId: string, id: string): Promise<boolean> {
  const live = (await channelsOf(store, projectId)).find((c) => c.id === id);
  if (!live) return false;
  await store.insertRows('alert_channels', [{ ...live, created_at: live.created_at, deleted: 1, updated_at: now() }], {
    name: 'alerts.channel_delete',
  });
  return true;
}

// ---- states ----

/** Every alert's state, by `project\nalert`. */
export async function allStates(store: Store): Promise<Map<string, StateRow>> {
  const rows = await store.rows<StateRow>(
    `SELECT project_id, alert, state, transitions, value, recent, calls, evaluated_at FROM alert_states FINAL`,
    {},
    { name: 'alerts.states' },
  );
  return new Map(rows.map((r) => [`${r.project_id}\n${r.alert}`, { ...r, transitions: Number(r.transitions), calls: Number(r.calls) }]));
}

export async function statesOf(store: Store, projectId: string): Promise<Map<string, StateRow>> {
  const rows = await store.rows<StateRow>(
    `SELECT project_id, alert, state, transitions, value, recent, calls, evaluated_at FROM alert_states FINAL WHERE project_id = {p:String}`,
    { p: projectId },
    { name: 'alerts.states_of_project' },
  );
  return new Map(
    rows.map((r) => [
      r.alert,
      { ...r, transitions: Number(r.transitions), calls: Number(r.calls), evaluated_at: engineTimeToIso(r.evaluated_at) },
    ]),
  );
}

export async function writeStates(store: Store, rows: Omit<StateRow, 'evaluated_at'>[]): Promise<void> {
  const at = now();
  await store.insertRows(
    'alert_states',
    rows.map((r) => ({ ...r, evaluated_at: at })),
    { name: 'alerts.states_write' },
  );
}

// ---- events ----

/** Which of these events are stored, as `project\nid` (the worker's pass: one statement for its transitions). */
export async function existingEvents(store: Store, keys: { project_id: string; id: string }[]): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const rows = await store.rows<{ project_id: string; id: string }>(
    `SELECT DISTINCT project_id, id FROM alert_events WHERE project_id IN {ps:Array(String)} AND id IN {ids:Array(String)}`,
    { ps: [...new Set(keys.map((k) => k.project_id))], ids: keys.map((k) => k.id) },
    { name: 'alerts.events_exist' },
  );
  return new Set(rows.map((r) => `${r.project_id}\n${r.id}`));
}

export async function insertEvent(store: Store, e: Omit<EventRow, 'created_at'> & { created_at?: string }): Promise<void> {
  await insertEvents(store, [e]);
}

export async function insertEvents(store: Store, events: (Omit<EventRow, 'created_at'> & { created_at?: string })[]): Promise<void> {
  const at = now();
  await store.insertRows(
    'alert_events',
    events.map((e) => ({ created_at: at, ...e })),
    { name: 'alerts.event_insert' },
  );
}

export async function queryEvents(
  store: Store,
  q: { project_id: string; alert?: string; state?: string; sinceIso?: string; limit: number },
): Promise<EventRow[]> {
  const p = new Params();
  const conds = [`project_id = ${p.str(q.project_id)}`];
  if (q.alert) conds.push(`alert = ${p.str(q.alert)}`);
  if (q.state) conds.push(`state = ${p.str(q.state)}`);
  if (q.sinceIso) conds.push(`created_at >= parseDateTime64BestEffort(${p.str(q.sinceIso)}, 6, 'UTC')`);
  const rows = await store.rows<EventRow>(
    `SELECT project_id, alert, id, alert_ref, state, value, threshold, muted, body, created_at FROM alert_events FINAL
      WHERE ${conds.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT ${p.int(q.limit)}`,
    p.values,
    { name: 'alerts.events_query' },
  );
  return rows.map((r) => ({ ...r, created_at: engineTimeToIso(r.created_at) }));
}

export async function eventsByIds(store: Store, keys: { project_id: string; id: string }[]): Promise<Map<string, EventRow>> {
  if (keys.length === 0) return new Map();
  const rows = await store.rows<EventRow>(
    `SELECT project_id, alert, id, alert_ref, state, value, threshold, muted, body, created_at FROM alert_events FINAL
      WHERE project_id IN {ps:Array(String)} AND id IN {ids:Array(String)}`,
    { ps: [...new Set(keys.map((k) => k.project_id))], ids: keys.map((k) => k.id) },
    { name: 'alerts.events_by_id' },
  );
  return new Map(rows.map((r) => [`${r.project_id}\n${r.id}`, { ...r, created_at: engineTimeToIso(r.created_at) }]));
}

// ---- deliveries (the outbox) and their attempts ----

/** Which of these events have deliveries written, as `project\nevent id`. */
export async function eventsWithDeliveries(store: Store, keys: { project_id: string; id: string }[]): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const rows = await store.rows<{ project_id: string; event_id: string }>(
    `SELECT DISTINCT project_id, event_id FROM alert_deliveries WHERE project_id IN {ps:Array(String)} AND event_id IN {ids:Array(String)}`,
    { ps: [...new Set(keys.map((k) => k.project_id))], ids: keys.map((k) => k.id) },
    { name: 'alerts.deliveries_exist' },
  );
  return new Set(rows.map((r) => `${r.project_id}\n${r.event_id}`));
}

export async function writeDeliveries(store: Store, rows: Omit<DeliveryRow, 'updated_at'>[]): Promise<void> {
  const at = now();
  await store.insertRows(
    'alert_deliveries',
    rows.map((r) => ({ ...r, updated_at: at })),
    { name: 'alerts.deliveries_write' },
  );
}

/** Pending deliveries whose next attempt is due, oldest first. */
export async function dueDeliveries(store: Store, limit: number): Promise<DeliveryRow[]> {
  return store.rows<DeliveryRow>(
    `SELECT project_id, event_id, channel_id, alert, status, attempts, next_attempt_at, last_code, last_error, created_at, updated_at
      FROM alert_deliveries FINAL WHERE status = 'pending' AND next_attempt_at <= now64(6)
      ORDER BY created_at LIMIT {n:UInt32}`,
    { n: limit },
    { name: 'alerts.deliveries_due' },
  );
}

export async function deliveriesOfEvents(store: Store, projectId: string, eventIds: string[]): Promise<DeliveryRow[]> {
  if (eventIds.length === 0) return [];
  const rows = await store.rows<DeliveryRow>(
    `SELECT project_id, event_id, channel_id, alert, status, attempts, next_attempt_at, last_code, last_error, created_at, updated_at
      FROM alert_deliveries FINAL WHERE project_id = {p:String} AND event_id IN {ids:Array(String)} ORDER BY channel_id`,
    { p: projectId, ids: eventIds },
    { name: 'alerts.deliveries_of_events' },
  );
  return rows.map((r) => ({ ...r, updated_at: engineTimeToIso(r.updated_at) }));
}

export async function logAttempts(
  store: Store,
  rows: {
    project_id: string;
    event_id: string;
    channel_id: string;
    alert: string;
    attempt: number;
    ok: number;
    code: number | null;
    error: string | null;
  }[],
): Promise<void> {
  const at = now();
  await store.insertRows(
    'alert_delivery_attempts',
    rows.map((r) => ({ ...r, at })),
    { name: 'alerts.attempts_log' },
  );
}

/**
 * The alert tables as retention removes from them (the writer's retention pass, with cutoffs of
 * their own: WEFT_ALERTS_RETENTION_DAYS, never longer than the project keeps its calls): the
 * attempts, deliveries and events written before the cutoff. A delivery is given up 24 hours
 * after its event (worker.ts), well within any cutoff (at least a day).
 */
export const ALERT_RETENTION: readonly RetentionTable[] = [
  { table: 'alert_delivery_attempts', expired: (c, p) => expiredRowsSql(c, 'at', p) },
  { table: 'alert_deliveries', expired: (c, p) => expiredRowsSql(c, 'created_at', p) },
  { table: 'alert_events', expired: (c, p) => expiredRowsSql(c, 'created_at', p) },
];

// ---- mutes ----

/** Mutes in force (until in the future), by `project\nalert` → until (ISO). */
export async function activeMutes(store: Store, projectId?: string): Promise<Map<string, string>> {
  const rows = await store.rows<{ project_id: string; alert: string; until: string }>(
    `SELECT project_id, alert, until FROM alert_mutes FINAL
      WHERE until IS NOT NULL AND until > now64(3)${projectId !== undefined ? ' AND project_id = {p:String}' : ''}`,
    projectId !== undefined ? { p: projectId } : {},
    { name: 'alerts.mutes' },
  );
  return new Map(rows.map((r) => [`${r.project_id}\n${r.alert}`, engineTimeToIso(r.until)]));
}

export async function writeMute(store: Store, projectId: string, alert: string, untilMicros: number | null): Promise<void> {
  await store.insertRows(
    'alert_mutes',
    [{ project_id: projectId, alert, until: untilMicros === null ? null : microsToClickHouse(untilMicros), updated_at: now() }],
    { name: 'alerts.mute_write' },
  );
}

// ---- the lease ----

export async function readAlertLease(store: Store, name: string, staleAfterMs: number): Promise<{ owner: string; fresh: boolean } | null> {
  const row = await store.row<{ owner: string; fresh: number }>(
    `SELECT owner, heartbeat_at >= now64(6) - toIntervalMillisecond({ms:UInt32}) AS fresh FROM alert_leases FINAL WHERE name = {n:String}`,
    { n: name, ms: staleAfterMs },
    { name: 'alerts.lease_read' },
  );
  return row ? { owner: row.owner, fresh: Number(row.fresh) === 1 } : null;
}

export async function writeAlertLease(store: Store, name: string, owner: string): Promise<void> {
  await store.insertRows('alert_leases', [{ name, owner, heartbeat_at: now() }], { name: 'alerts.lease_write' });
}

// ---- the figure of a window ----

/** How an alert folds its window's values into one figure. */
export type AlertAggregation = 'mean' | 'median' | 'min' | 'max' | 'mode' | 'percentage' | 'count' | 'sum' | `p${number}`;

/**
 * The figure of an alert's window, in one statement: the window's rows (`num`, `text`: libs/query's
 * callWindowSql, or a monitor's scores, feedback.ts monitorScoresWindowSql), aggregated exactly —
 * the mean is the mean of those values, the median and the pNN quantiles are exact (interpolated
 * between the two middle values, as the analytics catalogue's), `percentage` is 0–100. `value`
 * is null when the window holds nothing to aggregate; `calls`, how many rows it held.
 */
export async function measureWindow(
  store: Store,
  window: { sql: string; p: Params },
  how: { aggregation: AlertAggregation; statusMatch: string | null },
): Promise<{ value: number | null; calls: number }> {
  const { sql: rows, p } = window;
  // `counts`: each value with how often it occurs (keys sorted), for the mode.
  const counts = how.aggregation === 'mode' ? ', sumMapIf([assumeNotNull(num)], [toUInt64(1)], num IS NOT NULL) AS counts' : '';
  const sql = `SELECT count() AS calls, ${aggregateSql(how, p)} AS value${counts} FROM (${rows}) AS w`;
  const row = await store.row<{ calls: string; value: number | string | null }>(sql, p.values, { name: 'alerts.measure' });
  const value = row?.value === null || row?.value === undefined ? null : Number(row.value);
  return { value: value !== null && Number.isFinite(value) ? value : null, calls: Number(row?.calls ?? 0) };
}

/**
 * The sum of a window's values, added smallest first: the same bits however the engine reads
 * the rows (avg and sum add in the order blocks and threads deliver them, and vectorised
 * partial sums differ in the last bits), so a batch of alerts (alert-windows.ts) and one alert
 * alone give the same figure.
 */
export const WINDOW_SUM_SQL = 'arraySum(arraySort(groupArray(num)))';

/** The aggregate over the window's rows (`num`, `text`), NULL when there is nothing to aggregate. */
function aggregateSql(how: { aggregation: AlertAggregation; statusMatch: string | null }, p: Params): string {
  const numeric = (agg: string) => `if(count(num) = 0, NULL, toFloat64(${agg}))`;
  const matches = how.statusMatch !== null ? `text = ${p.str(how.statusMatch)}` : 'ifNull(num, 0) != 0';
  switch (how.aggregation) {
    case 'mean':
      return numeric(`${WINDOW_SUM_SQL} / count(num)`);
    case 'median':
      return numeric('quantileExactInclusive(0.5)(num)');
    case 'min':
      return numeric('min(num)');
    case 'max':
      return numeric('max(num)');
    case 'sum':
      return numeric(WINDOW_SUM_SQL);
    case 'mode':
      // The most frequent value; among equally frequent ones the smallest (a stable answer).
      return numeric('arraySort((x) -> (-toInt64(x.2), x.1), arrayZip(counts.1, counts.2))[1].1');
    case 'percentage':
      return `if(count() = 0, NULL, 100 * countIf(${matches}) / count())`;
    case 'count':
      return how.statusMatch !== null ? `toFloat64(countIf(${matches}))` : 'toFloat64(count())';
  }
  const q = Number(how.aggregation.slice(1)) / 100;
  return numeric(`quantileExactInclusive(${p.add(q, 'Float64')})(num)`);
}
