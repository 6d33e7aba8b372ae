import { measureWindow, monitorScoresWindowSql, type AlertStateName } from '@weft/objects';
import { callWindowSql } from '@weft/query';
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
const LAST_CALLS_LOOKS = 5;

/**
 * The figure of an alert's window now: its rows (libs/query's callWindowSql, or a monitor's
 * scores from libs/objects) aggregated as the rule says, in one statement (libs/objects alerts.ts
 * measureWindow) — or a few, for the last N calls of a call source with no duration (above).
 */
export async function measure(store: Store, rule: AlertRule, nowMs: number): Promise<Measure> {
  const source = rule.source;
  if (source.kind === 'calls' && rule.windowSize !== null && rule.windowDuration === null) {
    for (let i = 0, lookMs = LAST_CALLS_FIRST_LOOK_MS; i < LAST_CALLS_LOOKS; i++, lookMs *= 8) {
      const m = await measureWindow(store, callsWindow(rule, source, nowMs - lookMs), rule);
      if (m.calls >= rule.windowSize) return m;
    }
  }
  const sinceMs = rule.windowDuration !== null ? nowMs - rule.windowDuration * 1000 : undefined;
  const window = source.kind === 'calls' ? callsWindow(rule, source, sinceMs) : monitorWindow(rule, source, sinceMs);
  return measureWindow(store, window, rule);
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
