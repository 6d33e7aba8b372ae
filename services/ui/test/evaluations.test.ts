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
import { exportedComparison, exportedRows, scorePaths, type Comparison, type EvalRun } from '../app/eval-compare';
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

  it('only object and op refs are read (a table or call ref stays as it is)', () => {
    const rows = exampleRows(['r1'], [pas('c1', 'r1', 'x', {}, 1)]).map((r) => ({
      ...r,
      results: r.results.map((x) =>
        x ? { ...x, output: ['weave:///acme/p/table/abc', 'weave:///acme/p/op/f:1', 'weave:///acme/p/call/c9'] } : x,
      ),
    }));
    expect(outputRefs(rows)).toEqual(['weave:///acme/p/op/f:1']);
  });

  it('are exported as the view shows them: values, the stored refs beside them, scores, regressions', () => {
    const ref = (c: string) => `weave:///acme/p/object/lookup:abcd/attr/table/key/${c}`;
    const example = row('e1');
    const calls = [pas('c1', 'A', example, { exact: { correct: true } }, 1), pas('c2', 'B', example, { exact: { correct: false } }, 2)];
    calls[0]!.output = { output: ref('France'), scores: { exact: { correct: true } } };
    calls[1]!.output = { output: ref('Italy'), scores: { exact: { correct: false } } };
    const values = new Map<string, unknown>([
      [ref('France'), 'Paris'],
      [ref('Italy'), 'Rome'],
      [example, { country: 'France', capital: 'Paris' }],
    ]);
    const run = (id: string, model: string): EvalRun => ({
      call: {
        id,
        trace_id: `t-${id}`,
        started_at: '2026-01-01T00:00:00Z',
        ended_at: '2026-01-01T00:00:02Z',
        output: { exact: { correct: { true_fraction: id === 'A' ? 1 : 0 } } },
      } as unknown as Call,
      evaluationRef: null,
      evaluationName: 'caps',
      modelRef: null,
      modelName: model,
      datasetRef: null,
      scorers: ['exact'],
    });
    const c: Comparison = {
      runs: [run('A', 'right'), run('B', 'muddled')],
      rows: withResolvedOutputs(exampleRows(['A', 'B'], calls), values),
      examples: values,
      cut: false,
    };
    const doc = exportedComparison(c, false);
    expect(doc.runs.map((r) => [r.model, r.baseline, r.summary, r.latency_ms])).toEqual([
      ['right', true, { 'exact.correct.true_fraction': 1 }, 2000],
      ['muddled', false, { 'exact.correct.true_fraction': 0 }, 2000],
    ]);
    expect(doc.examples).toHaveLength(1);
    expect(doc.examples[0]!.example).toEqual({ country: 'France', capital: 'Paris' });
    expect(doc.examples[0]!.example_ref).toBe(example);
    expect(doc.examples[0]!.results.map((r) => [r?.output, r?.output_stored, r?.scores, r?.regressed])).toEqual([
      ['Paris', ref('France'), { 'exact.correct': true }, false],
      ['Rome', ref('Italy'), { 'exact.correct': false }, true],
    ]);
    const rows = exportedRows(doc);
    expect(rows.map((r) => [r.run, r.model, r.output, r.regressed])).toEqual([
      [0, 'right', 'Paris', false],
      [1, 'muddled', 'Rome', true],
    ]);
    expect(scorePaths(rows)).toEqual(['exact.correct']);
    // Regressions only: the one example where muddled did worse; none when it did not.
    expect(exportedComparison(c, true).examples).toHaveLength(1);
    const same = { ...c, runs: [c.runs[0]!, c.runs[0]!] };
    expect(
      exportedComparison({ ...same, rows: withResolvedOutputs(exampleRows(['A', 'A'], calls.slice(0, 1)), values) }, true).examples,
    ).toEqual([]);
  });
});
