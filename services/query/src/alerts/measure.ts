import { monitorScoresWindowSql } from '@weft/objects';
import { callWindowSql, type Params } from '@weft/query';
import type { Store } from '@weft/store';
import type { AlertRule } from './alert-spec';
import type { AlertStateName } from './repository';

/** An alert's figure over its window now, and how many calls (or scores) the window held. */
export interface Measure {
  /** null: the window holds nothing to aggregate (no transition is made on it). */
  value: number | null;
  calls: number;
}

/**
 * The figure of an alert's window, in one statement: the window's rows (libs/query's
 * callWindowSql, or a monitor's scores from libs/objects), aggregated exactly — the mean is the
 * mean of those values, the median and the pNN quantiles are exact (interpolated between the
 * two middle values, as the analytics catalogue's), `percentage` is 0–100.
 */
export async function measure(store: Store, rule: AlertRule, nowMs: number): Promise<Measure> {
  const last = rule.windowSize ?? undefined;
  const sinceMs = rule.windowDuration !== null ? nowMs - rule.windowDuration * 1000 : undefined;
  const { sql: window, p } =
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
  // `counts`: each value with how often it occurs (keys sorted), for the mode.
  const counts = rule.aggregation === 'mode' ? ', sumMapIf([assumeNotNull(num)], [toUInt64(1)], num IS NOT NULL) AS counts' : '';
  const sql = `SELECT count() AS calls, ${aggregateSql(rule, p)} AS value${counts} FROM (${window}) AS w`;
  const row = await store.row<{ calls: string; value: number | string | null }>(sql, p.values, { name: 'alerts.measure' });
  const value = row?.value === null || row?.value === undefined ? null : Number(row.value);
  return { value: value !== null && Number.isFinite(value) ? value : null, calls: Number(row?.calls ?? 0) };
}

/** The aggregate over the window's rows (`num`, `text`), NULL when there is nothing to aggregate. */
function aggregateSql(rule: AlertRule, p: Params): string {
  const numeric = (agg: string) => `if(count(num) = 0, NULL, toFloat64(${agg}))`;
  const matches = rule.statusMatch !== null ? `text = ${p.str(rule.statusMatch)}` : 'ifNull(num, 0) != 0';
  switch (rule.aggregation) {
    case 'mean':
      return numeric('avg(num)');
    case 'median':
      return numeric('quantileExactInclusive(0.5)(num)');
    case 'min':
      return numeric('min(num)');
    case 'max':
      return numeric('max(num)');
    case 'sum':
      return numeric('sum(num)');
    case 'mode':
      // The most frequent value; among equally frequent ones the smallest (a stable answer).
      return numeric('arraySort((x) -> (-toInt64(x.2), x.1), arrayZip(counts.1, counts.2))[1].1');
    case 'percentage':
      return `if(count() = 0, NULL, 100 * countIf(${matches}) / count())`;
    case 'count':
      return rule.statusMatch !== null ? `toFloat64(countIf(${matches}))` : 'toFloat64(count())';
  }
  const q = Number(rule.aggregation.slice(1)) / 100;
  return numeric(`quantileExactInclusive(${p.add(q, 'Float64')})(num)`);
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
