import { isDict, type RowResult } from './evaluation-run';

/**
 * Evaluation.summarize: each scorer's column summarized (Scorer.summarize's auto_summarize; a
 * row without the scorer's score counts as unscored), then the other columns (output,
 * model_latency) where auto_summarize finds something to say.
 */
export function summarizeEvaluation(rows: RowResult[], scorerNames: string[]): Record<string, unknown> {
  const summary: Record<string, unknown> = {};
  const out = autoSummarize(rows.map((r) => r.output));
  if (out && Object.keys(out).length > 0) summary.output = out;
  for (const name of scorerNames) summary[name] = autoSummarize(rows.map((r) => (name in r.scores ? r.scores[name] : {})));
  const latency = autoSummarize(rows.map((r) => r.model_latency));
  if (latency && Object.keys(latency).length > 0) summary.model_latency = latency;
  return summary;
}

/** The SDK's auto_summarize: booleans → true_count/true_fraction, numbers → mean, dicts member by member; `{}` marks an unscored row. */
export function autoSummarize(data: unknown[]): Record<string, unknown> | null {
  if (data.length === 0) return {};
  const scored = data.filter((x) => !isDict(x) || Object.keys(x).length > 0);
  return summarizeColumn(scored, data.length - scored.length);
}

function summarizeColumn(all: unknown[], unscored: number): Record<string, unknown> | null {
  const data = all.filter((x) => x !== null && x !== undefined);
  if (data.length === 0) return null;
  const first = data[0];
  if (typeof first === 'boolean') {
    const trueCount = data.filter(Boolean).length;
    return { true_count: trueCount, true_fraction: trueCount / (data.length + unscored) };
  }
  if (typeof first === 'number') return { mean: (data as number[]).reduce((a, b) => a + Number(b), 0) / data.length };
  if (isDict(first)) {
    const result: Record<string, unknown> = {};
    const keys = [...new Set(data.filter(isDict).flatMap((d) => Object.keys(d)))];
    for (const k of keys) {
      const s = summarizeColumn(
        data.filter(isDict).map((d) => d[k]),
        unscored,
      );
      if (s === null) continue;
      if (k in s) Object.assign(result, s);
      else result[k] = s;
    }
    return Object.keys(result).length > 0 ? result : null;
  }
  return null;
}
