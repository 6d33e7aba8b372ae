import type { Params } from '@weft/query';
import type { Store } from '@weft/store';
import { WINDOW_SUM_SQL, type AlertAggregation } from './alerts';

/** One alert's window over the batch's rows. */
export interface BatchWindow {
  /** SQL condition on a row: it is in the alert's scope (the rows' `member`). */
  member: string;
  /** 1-based index of the alert's value in `nums`/`texts`. */
  value: number;
  /** The newest `last` rows that have a value (window_size), or null. */
  last: number | null;
  /** Rows at or after this time (µs; window_duration), or null. */
  sinceUs: number | null;
  aggregation: AlertAggregation;
  statusMatch: string | null;
}

/** A window's figure, as measureWindow's. */
export type BatchFigure = { value: number | null; calls: number };

/** Where no window_size applies: past any window (and a safe JSON integer). */
const NO_LIMIT = 2 ** 52;

/**
 * Many alerts' figures in one statement (the alert worker's pass, docs/alerts.md "How a pass is
 * evaluated"): one scan of the rows every window draws from (libs/query callWindowsRowsSql, or
 * feedback.ts monitorScoresRowsSql: `id`, `at` µs, `nums`, `texts`, and what `member` reads),
 * each row sent to the sources it is in (a source: the rows of one scope with a value at one
 * path); per source the newest rows (a bounded sorted heap, groupArraySorted) or, when its
 * windows are all durations, every row since the oldest start; then each alert's window taken
 * from its source's rows and aggregated as measureWindow (alerts.ts) does, so each figure equals
 * the one-alert statement's.
 */
export async function measureWindows(store: Store, rows: { sql: string; p: Params }, windows: BatchWindow[]): Promise<BatchFigure[]> {
  if (windows.length === 0) return [];
  const p = rows.p;
  // Sources: windows of one scope and value, ranked (some window_size) or all durations.
  const sourceOf = new Map<string, number>();
  const sources: { member: string; value: number; ranked: boolean; floorUs: number | null; alerts: number[] }[] = [];
  windows.forEach((w, i) => {
    const ranked = w.last !== null;
    const key = `${w.member}\n${w.value}\n${ranked}`;
    let s = sourceOf.get(key);
    if (s === undefined) {
      s = sources.length;
      sourceOf.set(key, s);
      sources.push({ member: w.member, value: w.value, ranked, floorUs: w.sinceUs, alerts: [] });
    }
    const src = sources[s]!;
    // A source's rows start at its oldest window's start, when every window of it has one.
    src.floorUs = src.floorUs === null || w.sinceUs === null ? null : Math.min(src.floorUs, w.sinceUs);
    src.alerts.push(i + 1);
  });
  const heap = Math.max(1, ...windows.map((w) => w.last ?? 0));
  const values = p.add(
    sources.map((s) => s.value),
    'Array(UInt32)',
  );
  const ranked = p.add(
    sources.map((s) => (s.ranked ? 1 : 0)),
    'Array(UInt8)',
  );
  const alertsOf = p.add(
    sources.map((s) => s.alerts),
    'Array(Array(UInt32))',
  );
  const sizes = p.add(
    windows.map((w) => w.last ?? NO_LIMIT),
    'Array(UInt64)',
  );
  const sinces = p.add(
    windows.map((w) => Math.floor(w.sinceUs ?? 0)),
    'Array(Int64)',
  );
  const kinds = p.add(
    windows.map((w) => w.aggregation),
    'Array(String)',
  );
  const hasMatch = p.add(
    windows.map((w) => (w.statusMatch !== null ? 1 : 0)),
    'Array(UInt8)',
  );
  const matches = p.add(
    windows.map((w) => w.statusMatch ?? ''),
    'Array(String)',
  );
  const levels = [...new Set(windows.map((w) => quantileLevel(w.aggregation)).filter((q): q is number => q !== null))];
  const levelOf = p.add(
    windows.map((w) => {
      const q = quantileLevel(w.aggregation);
      return q === null ? 0 : levels.indexOf(q) + 1;
    }),
    'Array(UInt32)',
  );

  const inSource = sources.map((s, i) => {
    const floor = s.floorUs !== null ? ` AND at >= ${p.add(Math.floor(s.floorUs), 'Int64')}` : '';
    return `if(${s.member} AND texts[${s.value}] IS NOT NULL${floor}, ${i + 1}, 0)`;
  });
  // Each row once per source it is in, with that source's value.
  const sourceRows = `SELECT src, at, id, arrayElement(nums, ${values}[src]) AS num, arrayElement(texts, ${values}[src]) AS text
    FROM (${rows.sql}) ARRAY JOIN arrayFilter(s -> s != 0, [${inSource.map((c) => `toUInt32(${c})`).join(', ')}]) AS src`;
  // Newest first, the one-alert statement's order (end desc, id desc: the id's bytes inverted,
  // then 0xFF so that a prefix sorts after the longer id). A window_size source keeps its
  // newest rows only (a bounded heap); a duration source every row from its start on.
  const key = `(-at, concat(bitNot(id), '\\xFF'), num, text)`;
  const perSource = `SELECT src, if(${ranked}[src] = 1,
        groupArraySortedIf(${heap})(${key}, ${ranked}[src] = 1),
        arraySort(groupArrayIf(${key}, ${ranked}[src] = 0))) AS w
    FROM (${sourceRows}) GROUP BY src`;
  const ranks = `SELECT src, arrayJoin(arrayMap((t, i) -> (t, i), w, arrayEnumerate(w))) AS r,
      tupleElement(r, 2) AS rank, -tupleElement(tupleElement(r, 1), 1) AS at, tupleElement(r, 1) AS row FROM (${perSource})`;
  const inWindow = `SELECT arrayJoin(arrayFilter(a -> rank <= ${sizes}[a] AND at >= ${sinces}[a], ${alertsOf}[src])) AS a,
      tupleElement(row, 3) AS num, tupleElement(row, 4) AS text
    FROM (${ranks})`;
  const kind = `${kinds}[a]`;
  const any = 'count(num) = 0';
  const matched = `countIf(if(${hasMatch}[a] = 1, text = ${matches}[a], ifNull(num, 0) != 0))`;
  const quantiles = levels.length
    ? `quantilesExactInclusiveIf(${levels.map(String).join(', ')})(num, ${levelOf}[a] != 0)`
    : `CAST([], 'Array(Float64)')`;
  const value = `multiIf(
      ${kind} = 'mean', if(${any}, NULL, toFloat64(${WINDOW_SUM_SQL} / count(num))),
      ${kind} = 'min', if(${any}, NULL, toFloat64(min(num))),
      ${kind} = 'max', if(${any}, NULL, toFloat64(max(num))),
      ${kind} = 'sum', if(${any}, NULL, toFloat64(${WINDOW_SUM_SQL})),
      ${kind} = 'mode', if(${any}, NULL, toFloat64(arraySort((x) -> (-toInt64(x.2), x.1), arrayZip(counts.1, counts.2))[1].1)),
      ${kind} = 'percentage', if(count() = 0, NULL, 100 * ${matched} / count()),
      ${kind} = 'count', if(${hasMatch}[a] = 1, toFloat64(${matched}), toFloat64(count())),
      if(${any}, NULL, toFloat64(arrayElement(${quantiles}, ${levelOf}[a]))))`;
  const sql = `SELECT a, count() AS calls, ${value} AS value,
      sumMapIf([assumeNotNull(num)], [toUInt64(1)], num IS NOT NULL AND ${kind} = 'mode') AS counts
    FROM (${inWindow}) GROUP BY a`;
  const out = await store.rows<{ a: number | string; calls: number | string; value: number | string | null }>(sql, p.values, {
    name: 'alerts.measure_batch',
  });
  // A window with no rows: what the one-alert statement gives over none.
  const figures: BatchFigure[] = windows.map((w) => ({ value: w.aggregation === 'count' ? 0 : null, calls: 0 }));
  for (const r of out) {
    const i = Number(r.a) - 1;
    const v = r.value === null ? null : Number(r.value);
    figures[i] = { value: v !== null && Number.isFinite(v) ? v : null, calls: Number(r.calls) };
  }
  return figures;
}

/** The quantile an aggregation reads (median: 0.5; pNN: NN/100), or null. */
function quantileLevel(aggregation: AlertAggregation): number | null {
  if (aggregation === 'median') return 0.5;
  if (!/^p\d+(\.\d+)?$/.test(aggregation)) return null;
  const q = Number(aggregation.slice(1)) / 100;
  return q >= 0 && q <= 1 ? q : null;
}
