import { describe, expect, it } from 'vitest';
import { columnsOf, defaultMapping, parseCell, rowFromCall, rowsDigestOf, updatesForEdits } from '../app/datasets';

const calls = [
  { id: 'a', inputs: { self: 'weave:///e/p/object/M:1', question: '1 + 1', context: 'x' }, output: { answer: '2', confidence: 0.9 } },
  { id: 'b', inputs: { question: '2 + 2' }, output: { answer: '4' } },
];

describe('datasets from calls', () => {
  it('offers a column per input (not self) and the output for a new dataset', () => {
    expect(defaultMapping(calls, null)).toEqual([
      { column: 'question', source: 'inputs.question' },
      { column: 'context', source: 'inputs.context' },
      { column: 'output', source: 'output' },
    ]);
  });

  it("maps an existing dataset's columns by name, to an input or a key of the output", () => {
    expect(defaultMapping(calls, ['question', 'answer'])).toEqual([
      { column: 'question', source: 'inputs.question' },
      { column: 'answer', source: 'output.answer' },
    ]);
    // One column nothing names: the output.
    expect(defaultMapping(calls, ['question', 'expected'])).toEqual([
      { column: 'question', source: 'inputs.question' },
      { column: 'expected', source: 'output' },
    ]);
  });

  it('makes rows of the mapped values a call has', () => {
    const mapping = [
      { column: 'q', source: 'inputs.question' },
      { column: 'c', source: 'inputs.context' },
      { column: 'a', source: 'output.answer' },
      { column: 'ignored', source: '' },
    ];
    expect(calls.map((c) => rowFromCall(c, mapping))).toEqual([
      { q: '1 + 1', c: 'x', a: '2' },
      { q: '2 + 2', a: '4' },
    ]);
    expect(
      columnsOf([
        { b: 1, a: 2 },
        { c: 3, a: 1 },
      ]),
    ).toEqual(['b', 'a', 'c']);
  });
});

describe('row edits', () => {
  it('become table updates from the highest index down, so each index names its row in the base', () => {
    const edits = new Map<number, Record<string, unknown> | null>([
      [0, { a: 'edited' }],
      [5, null],
      [2, { a: 'two' }],
    ]);
    expect(updatesForEdits(edits)).toEqual([
      { pop: { index: 5 } },
      { pop: { index: 2 } },
      { insert: { index: 2, row: { a: 'two' } } },
      { pop: { index: 0 } },
      { insert: { index: 0, row: { a: 'edited' } } },
    ]);
  });

  it('read a typed cell back as the kind of value it held', () => {
    expect(parseCell('4', 'four')).toBe('4');
    expect(parseCell('4', 3)).toBe(4);
    expect(() => parseCell('four', 3)).toThrow(/not a number/);
    expect(parseCell('false', true)).toBe(false);
    expect(parseCell('{"a": [1]}', { a: 0 })).toEqual({ a: [1] });
    expect(parseCell('null', null)).toBeNull();
    expect(() => parseCell('{', {})).toThrow(/not JSON/);
    expect(parseCell('new', undefined)).toBe('new');
  });

  it("find a dataset version's table", () => {
    expect(rowsDigestOf({ _type: 'Dataset', rows: 'weave:///e/p/table/abc123' })).toBe('abc123');
    expect(rowsDigestOf({ rows: [1, 2] })).toBeNull();
    expect(rowsDigestOf(null)).toBeNull();
  });
});
