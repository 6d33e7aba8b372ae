import {
  measureWindow,
  measureWindows,
  monitorScoresRowsSql,
  monitorScoresWindowSql,
  type AlertStateName,
  type BatchWindow,
} from '@weft/objects';
import { callWindowSql, callWindowsRowsSql, endRowCount } from '@weft/query';
import type { Store } from '@weft/store';
import type { AlertRule } from './alert-spec';

type CallSource = Extract<AlertRule['source'], { kind: 'calls' }>;
type MonitorSource = Extract<AlertRule['source'], { kind: 'monitor' }>;

/** An alert's figure over its window now, and how many calls (or scores) the window held. */
export interface Measure {
  /** null: the window holds nothing to aggregate (no transition is made on it). */
  value: number | null;
  calls: number;
}

/**
 * How far back a window of the last N calls first looks (ms), widened ×8 while it holds fewer
 * than N, then unbounded: the newest N calls that end within a bound are the newest N overall,
 * and a bound lets the engine read only recent end rows (the ended_at index) instead of all.
 */
const LAST_CALLS_FIRST_LOOK_MS = 300_000;
export const LAST_CALLS_LOOKS = 5;
/** Projects with fewer calls than this are read whole, without looking back in steps (measureAll's default). */
const LOOK_BACK_MIN_CALLS = 200_000;

/**
 * The figure of an alert's window now: its rows (libs/query's callWindowSql, or a monitor's
 * scores from libs/objects) aggregated as the rule says, in one statement (libs/objects alerts.ts
 * measureWindow) — or a few, for the last N calls of a call source with no duration (above).
 */
export async function measure(store: Store, rule: AlertRule, nowMs: number): Promise<Measure> {
  const source = rule.source;
  const sinceMs = rule.windowDuration !== null ? nowMs - rule.windowDuration * 1000 : undefined;
  if (source.kind === 'monitor') return measureWindow(store, monitorWindow(rule, source, sinceMs), rule);
  // The last N calls, with no duration: looking back; otherwise from the duration's start, in one statement.
  const steps = rule.windowSize !== null && rule.windowDuration === null;
  const figures = await lookingBack(
    [rule],
    nowMs,
    steps,
    async () => true,
    async ([r], floorMs) => [await measureWindow(store, callsWindow(r!, source, floorMs ?? sinceMs), r!)],
  );
  return figures.get(rule)!;
}

/**
 * Figures of `rules` over the calls that ended within widening spans (LAST_CALLS_FIRST_LOOK_MS
 * ×8, LAST_CALLS_LOOKS of them, then all; with `steps` false, all at once): `measureFrom(rules,
 * floorMs)` measures them over the calls ended since the floor (undefined: no floor). A rule
 * whose window the span holds whole — N calls with a value, or a duration inside it — keeps its
 * figure; the others are measured again over the next span. `proceed` false stops between spans.
 */
async function lookingBack(
  rules: AlertRule[],
  nowMs: number,
  steps: boolean,
  proceed: () => Promise<boolean>,
  measureFrom: (rules: AlertRule[], floorMs?: number) => Promise<Measure[]>,
): Promise<Map<AlertRule, Measure>> {
  const out = new Map<AlertRule, Measure>();
  let left = rules;
  for (let i = 0, lookMs = LAST_CALLS_FIRST_LOOK_MS; steps && i < LAST_CALLS_LOOKS && left.length; i++, lookMs *= 8) {
    const floorMs = nowMs - lookMs;
    const figures = await measureFrom(left, floorMs);
    const held = (r: AlertRule, m: Measure) =>
      (r.windowDuration !== null && nowMs - r.windowDuration * 1000 >= floorMs) || (r.windowSize !== null && m.calls >= r.windowSize);
    left.forEach((r, j) => held(r, figures[j]!) && out.set(r, figures[j]!));
    left = left.filter((r) => !out.has(r));
    if (left.length && !(await proceed())) return out;
  }
  if (left.length) {
    const figures = await measureFrom(left);
    left.forEach((r, j) => out.set(r, figures[j]!));
  }
  return out;
}

/** The rows of a call source's window: calls ended since `sinceMs` (if given), the last windowSize of them. */
function callsWindow(rule: AlertRule, source: CallSource, sinceMs: number | undefined) {
  return callWindowSql({
    project_id: rule.projectId,
    op_names: source.opNames,
    metric: source.metric,
    ...(sinceMs !== undefined ? { endedAfterUs: sinceMs * 1000 } : {}),
    ...(rule.windowSize !== null ? { last: rule.windowSize } : {}),
  });
}

/** The rows of a monitor source's window: its scores written since `sinceMs` (if given), the last windowSize of them. */
function monitorWindow(rule: AlertRule, source: MonitorSource, sinceMs: number | undefined) {
  return monitorScoresWindowSql({
    project_id: rule.projectId,
    monitorRefPrefix: source.monitorPrefix,
    ...(source.scorerPrefix ? { scorerRefPrefix: source.scorerPrefix } : {}),
    path: source.path,
    ...(sinceMs !== undefined ? { sinceMs } : {}),
    ...(rule.windowSize !== null ? { last: rule.windowSize } : {}),
  });
}

/**
 * At most this many alerts are measured by one statement: its per-alert settings are constant
 * arrays the engine copies for each row it indexes them on, so memory grows with alerts × rows
 * (500 alerts over 10M calls passed the 4 GiB statement cap).
 */
export const ALERTS_PER_STATEMENT = 100;

/**
 * Every rule's figure now, as `measure` gives it, in few statements: a project's alerts on calls
 * in one (libs/objects measureWindows over one scan of its calls), its alerts on monitors' scores
 * in another, those with a window_duration only apart (batchesOf), ALERTS_PER_STATEMENT at most
 * each. A batch that fails is measured alert by alert, so one bad alert fails alone (its Error
 * in the map; `onBatchFailure` hears of the batch). `proceed` is asked before each statement:
 * false stops (the rules not measured are absent from the map).
 */
export async function measureAll(
  store: Store,
  rules: AlertRule[],
  nowMs: number,
  proceed: () => Promise<boolean> = async () => true,
  onBatchFailure: (err: unknown, alerts: number) => void = () => {},
  lookBackMinCalls = LOOK_BACK_MIN_CALLS,
): Promise<Map<AlertRule, Measure | Error>> {
  const out = new Map<AlertRule, Measure | Error>();
  const alone = async (rule: AlertRule) => {
    try {
      out.set(rule, await measure(store, rule, nowMs));
    } catch (err) {
      out.set(rule, err instanceof Error ? err : new Error(String(err)));
    }
  };
  for (const batch of batchesOf(rules)) {
    if (!(await proceed())) return out;
    try {
      for (const [rule, figure] of await measureLookingBack(store, batch, nowMs, proceed, lookBackMinCalls)) out.set(rule, figure);
    } catch (err) {
      onBatchFailure(err, batch.length);
      for (const rule of batch) {
        if (!(await proceed())) return out;
        await alone(rule);
      }
    }
  }
  return out;
}

/** A batch's figures, looking back (lookingBack) where it has alerts on the last N calls of a project of lookBackMinCalls or more. */
async function measureLookingBack(
  store: Store,
  batch: AlertRule[],
  nowMs: number,
  proceed: () => Promise<boolean>,
  lookBackMinCalls: number,
): Promise<Map<AlertRule, Measure>> {
  const first = batch[0]!;
  // A small project is read whole at once: the look-back's steps would cost more than they save.
  const steps =
    first.source.kind === 'calls' &&
    batch.some((r) => r.windowSize !== null) &&
    (await endRowCount(store, first.projectId)) >= lookBackMinCalls;
  return lookingBack(batch, nowMs, steps, proceed, (rules, floorMs) =>
    measureBatch(store, rules, nowMs, floorMs !== undefined ? floorMs * 1000 : undefined),
  );
}

/**
 * The rules by project, source kind and window kind, ALERTS_PER_STATEMENT at most per batch
 * (scopes together). Alerts with only a window_duration are apart: their statement reads only
 * the calls since the oldest start, and the one of window_size alerts (which reads every call of
 * its scopes) only the values they need.
 */
function batchesOf(rules: AlertRule[]): AlertRule[][] {
  const groups = new Map<string, AlertRule[]>();
  for (const r of rules) {
    const key = `${r.projectId}\n${r.source.kind}\n${r.windowSize === null ? 'duration' : 'size'}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const out: AlertRule[][] = [];
  for (const group of groups.values()) {
    group.sort((a, b) => scopeKey(a).localeCompare(scopeKey(b)));
    for (let i = 0; i < group.length; i += ALERTS_PER_STATEMENT) out.push(group.slice(i, i + ALERTS_PER_STATEMENT));
  }
  return out;
}

const scopeKey = (r: AlertRule) =>
  r.source.kind === 'calls'
    ? JSON.stringify([[...r.source.opNames].sort(), r.source.metric])
    : JSON.stringify([r.source.monitorPrefix, r.source.scorerPrefix ?? '', r.source.path]);

/** One batch of a project's rules of one source kind, in one statement. */
async function measureBatch(store: Store, batch: AlertRule[], nowMs: number, lookFloorUs?: number) {
  const sinceUs = (r: AlertRule) => (r.windowDuration !== null ? (nowMs - r.windowDuration * 1000) * 1000 : null);
  const starts = batch.map(sinceUs);
  // Every window has a start: the scan reads only from the oldest one on (or from the look-back's span).
  const oldest = starts.every((s) => s !== null) ? Math.min(...(starts as number[])) : undefined;
  const floorUs = lookFloorUs !== undefined ? Math.max(lookFloorUs, oldest ?? lookFloorUs) : oldest;
  const window = (r: AlertRule, member: string, value: number): BatchWindow => ({
    member,
    value,
    last: r.windowSize,
    sinceUs: sinceUs(r),
    aggregation: r.aggregation,
    statusMatch: r.statusMatch,
  });
  const first = batch[0]!;
  if (first.source.kind === 'calls') {
    const calls = batch.map((r) => r.source as Extract<AlertRule['source'], { kind: 'calls' }>);
    const metrics = [...new Set(calls.map((c) => c.metric))];
    const everyOp = calls.some((c) => c.opNames.length === 0);
    const rows = callWindowsRowsSql({
      project_id: first.projectId,
      op_names: everyOp ? null : [...new Set(calls.flatMap((c) => c.opNames))],
      metrics,
      ...(floorUs !== undefined ? { endedAfterUs: floorUs } : {}),
    });
    const members = new Map<string, string>();
    const windows = batch.map((r, i) => {
      const scope = JSON.stringify([...calls[i]!.opNames].sort());
      if (!members.has(scope)) members.set(scope, rows.member(calls[i]!.opNames));
      return window(r, members.get(scope)!, metrics.indexOf(calls[i]!.metric) + 1);
    });
    return measureWindows(store, rows, windows);
  }
  const scores = batch.map((r) => r.source as Extract<AlertRule['source'], { kind: 'monitor' }>);
  const pathKeys = [...new Set(scores.map((s) => JSON.stringify(s.path)))];
  const rows = monitorScoresRowsSql({
    project_id: first.projectId,
    monitorRefPrefixes: [...new Set(scores.map((s) => s.monitorPrefix))],
    paths: pathKeys.map((k) => JSON.parse(k) as string[]),
    ...(floorUs !== undefined ? { sinceMs: floorUs / 1000 } : {}),
  });
  const members = new Map<string, string>();
  const windows = batch.map((r, i) => {
    const s = scores[i]!;
    const key = JSON.stringify([s.monitorPrefix, s.scorerPrefix ?? '']);
    if (!members.has(key)) members.set(key, rows.member(s.monitorPrefix, s.scorerPrefix));
    return window(r, members.get(key)!, pathKeys.indexOf(JSON.stringify(s.path)) + 1);
  });
  return measureWindows(store, rows, windows);
}

/** Whether a figure crosses the line (strictly: a figure on the threshold does not). */
export function breaches(rule: Pick<AlertRule, 'comparison' | 'threshold' | 'band'>, value: number): boolean {
  switch (rule.comparison) {
    case 'GREATER_THAN':
      return value > rule.threshold;
    case 'LESS_THAN':
      return value < rule.threshold;
    case 'EQUAL':
      return value === rule.threshold;
  }
}

/** Whether a firing alert's figure is clear of the line: past it by more than the band (hysteresis). */
function clears(rule: Pick<AlertRule, 'comparison' | 'threshold' | 'band'>, value: number): boolean {
  switch (rule.comparison) {
    case 'GREATER_THAN':
      return value < rule.threshold - rule.band;
    case 'LESS_THAN':
      return value > rule.threshold + rule.band;
    case 'EQUAL':
      return Math.abs(value - rule.threshold) > rule.band;
  }
}

/**
 * ok → firing when the figure crosses the line; firing → resolved only once it is clear of it by
 * the band, so a figure on (or wobbling about) the threshold makes no second transition;
 * resolved → firing again on the next crossing. No figure (an empty window): no change.
 */
export function nextState(
  prev: AlertStateName,
  value: number | null,
  rule: Pick<AlertRule, 'comparison' | 'threshold' | 'band'>,
): AlertStateName {
  if (value === null) return prev;
  if (prev === 'firing') return clears(rule, value) ? 'resolved' : 'firing';
  return breaches(rule, value) ? 'firing' : prev;
}
