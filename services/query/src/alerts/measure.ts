import { measureWindow, monitorScoresWindowSql, type AlertStateName } from '@weft/objects';
import { callWindowSql } from '@weft/query';
import type { Store } from '@weft/store';
import type { AlertRule } from './alert-spec';

/** An alert's figure over its window now, and how many calls (or scores) the window held. */
export interface Measure {
  /** null: the window holds nothing to aggregate (no transition is made on it). */
  value: number | null;
  calls: number;
}

/**
 * The figure of an alert's window now: its rows (libs/query's callWindowSql, or a monitor's
 * scores from libs/objects) aggregated as the rule says, in one statement (libs/objects alerts.ts
 * measureWindow).
 */
export async function measure(store: Store, rule: AlertRule, nowMs: number): Promise<Measure> {
  const last = rule.windowSize ?? undefined;
  const sinceMs = rule.windowDuration !== null ? nowMs - rule.windowDuration * 1000 : undefined;
  const window =
    rule.source.kind === 'calls'
      ? callWindowSql({
          project_id: rule.projectId,
          op_names: rule.source.opNames,
          metric: rule.source.metric,
          ...(sinceMs !== undefined ? { endedAfterUs: sinceMs * 1000 } : {}),
          ...(last !== undefined ? { last } : {}),
        })
      : monitorScoresWindowSql({
          project_id: rule.projectId,
          monitorRefPrefix: rule.source.monitorPrefix,
          ...(rule.source.scorerPrefix ? { scorerRefPrefix: rule.source.scorerPrefix } : {}),
          path: rule.source.path,
          ...(sinceMs !== undefined ? { sinceMs } : {}),
          ...(last !== undefined ? { last } : {}),
        });
  return measureWindow(store, window, rule);
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
