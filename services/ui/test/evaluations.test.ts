import { describe, expect, it } from 'vitest';
import {
  exampleKey,
  exampleRows,
  isRegression,
  metricLeaves,
  outputRefs,
  resolveRefs,
  verdict,
  withResolvedOutputs,
} from '../app/evaluations';
import type { Call } from '../app/types';

const row = (digest: string) => `weave:///acme/p/object/ds:${digest.repeat(4)}/attr/rows/id/${digest}`;
const pas = (id: string, parent: string, example: unknown, scores: unknown, at: number): Call =>
  ({
    id,
    parent_id: parent,
    trace_id: `t-${parent}`,
    started_at: new Date(Date.UTC(2026, 0, 1, 0, 0, at)).toISOString(),
    inputs: { example },
    output: { output: id, scores },
  }) as unknown as Call;

describe('evaluation examples', () => {
  it('are matched by the dataset row digest, whatever the dataset version; inline examples by content, key order aside', () => {
    expect(exampleKey(row('abc'))).toBe('row:abc');
    expect(exampleKey(row('abc').replace('ds:abcabc', 'ds:zzzzzz'))).toBe('row:abc');
    expect(exampleKey({ b: 1, a: [1, { y: 2, x: 1 }] })).toBe(exampleKey({ a: [1, { x: 1, y: 2 }], b: 1 }));
    expect(exampleKey({ a: 1 })).not.toBe(exampleKey({ a: 2 }));
  });

  it('group each run’s predict_and_score calls by example, in the baseline’s order, counting trials', () => {
    const calls = [
      pas('b1', 'B', { q: 'one' }, { ok: false }, 3),
      pas('a2', 'A', { q: 'two' }, { ok: true }, 2),
      pas('a1', 'A', { q: 'one' }, { ok: true }, 1),
      pas('a1bis', 'A', { q: 'one' }, { ok: true }, 4),
      pas('b3', 'B', { q: 'three' }, { ok: true }, 5),
    ];
    const rows = exampleRows(['A', 'B'], calls);
    expect(rows.map((r) => r.example)).toEqual([{ q: 'one' }, { q: 'two' }, { q: 'three' }]);
    expect(rows[0]!.results.map((r) => r?.call.id)).toEqual(['a1', 'b1']);
    expect(rows[0]!.results[0]!.trials).toBe(2);
    expect(rows[1]!.results[1]).toBeNull();
    expect(rows.map((r) => isRegression(r, 1))).toEqual([true, false, false]);
  });

  it('take scores as higher-is-better, latency and cost as lower-is-better, booleans as 1/0', () => {
    expect(metricLeaves({ exact: { correct: true }, closeness: 0.5, label: 'x' })).toEqual([
      { path: 'exact.correct', value: 1, bool: true },
      { path: 'closeness', value: 0.5 },
    ]);
    expect(verdict('closeness.mean', 0.9, 0.7)).toBe('worse');
    expect(verdict('model_latency.mean', 0.9, 0.7)).toBe('better');
    expect(verdict('cost', 1, 1)).toBe('same');
    expect(verdict('output.mean', 10, 11)).toBe('none');
  });
});

describe('outputs that are refs (issue 53, item 3)', () => {
  it('are read and shown as their values, the stored ref kept', () => {
    const paris = 'weave:///acme/p/object/lookup:abcd/attr/table/key/France';
    const rows = exampleRows(['r1'], [pas('c1', 'r1', { country: 'France' }, { correct: true }, 1)]).map((r) => ({
      ...r,
      results: r.results.map((x) => (x ? { ...x, output: { answer: paris, n: 1 } } : x)),
    }));
    expect(outputRefs(rows)).toEqual([paris]);
    const [resolved] = withResolvedOutputs(rows, new Map([[paris, 'Paris']]));
    expect(resolved!.results[0]!.output).toEqual({ answer: 'Paris', n: 1 });
    expect(resolved!.results[0]!.rawOutput).toEqual({ answer: paris, n: 1 });
    expect(resolveRefs([paris, 'plain'], new Map([[paris, { city: 'Paris' }]]))).toEqual([{ city: 'Paris' }, 'plain']);
  });
});
