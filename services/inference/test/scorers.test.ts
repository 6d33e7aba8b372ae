import { describe, expect, it } from 'vitest';
import type { Store } from '@weft/store';
import { runScorer, type Scorer } from '../src/scorers';
import type { UpstreamRegistry } from '../src/upstreams';

/** The checks weft runs itself read no store and ask no model. */
const noStore = {} as Store;
const noUpstreams = {} as UpstreamRegistry;
const scorer = (val: Record<string, unknown>): Scorer => ({ ref: 'weave:///e/p/object/s:1', name: String(val._class_name), val });
const score = (val: Record<string, unknown>, output: unknown, vars: Record<string, unknown> = {}) =>
  runScorer(noStore, noUpstreams, scorer(val), output, vars);

describe('the scorers weft runs itself', () => {
  it("Weave's StringMatchScorer and LevenshteinScorer, against the row's target", async () => {
    expect(await score({ _class_name: 'StringMatchScorer' }, 'Paris', { target: 'The capital is PARIS.' })).toEqual({
      output: { string_in_input: true },
    });
    expect(await score({ _class_name: 'StringMatchScorer' }, 'Rome', { target: 'Paris' })).toEqual({ output: { string_in_input: false } });
    expect(await score({ _class_name: 'LevenshteinScorer' }, 'kitten', { target: 'sitting' })).toEqual({
      output: { levenshtein_distance: 3 },
    });
    expect(await score({ _class_name: 'LevenshteinScorer' }, 'kitten', {})).toMatchObject({ error: expect.stringContaining('target') });
  });

  it('RegexScorer (RE2: a pattern that backtracks exponentially elsewhere answers at once), with flags', async () => {
    expect(await score({ _class_name: 'RegexScorer', pattern: '\\d{3}-\\d{4}' }, 'call 555-1234')).toEqual({
      output: { regex_match: true },
    });
    expect(await score({ _class_name: 'RegexScorer', pattern: '^hello', flags: 'i' }, 'HELLO there')).toEqual({
      output: { regex_match: true },
    });
    expect(await score({ _class_name: 'RegexScorer', pattern: '^hello' }, 'HELLO there')).toEqual({ output: { regex_match: false } });
    const started = performance.now();
    expect(await score({ _class_name: 'RegexScorer', pattern: '^(a+)+$' }, `${'a'.repeat(40)}!`)).toEqual({
      output: { regex_match: false },
    });
    expect(performance.now() - started).toBeLessThan(1000);
    expect(await score({ _class_name: 'RegexScorer', pattern: '(' }, 'x')).toMatchObject({ error: expect.stringContaining('RE2') });
    // A non-text output is read as its JSON.
    expect(await score({ _class_name: 'RegexScorer', pattern: '"answer": 42' }, { answer: 42 })).toEqual({ output: { regex_match: true } });
  });

  it('ContainsWordsScorer and LengthScorer', async () => {
    expect(await score({ _class_name: 'ContainsWordsScorer', target_words: ['refund', 'cancel'] }, 'I want to cancel')).toEqual({
      output: { contains_words: true },
    });
    expect(await score({ _class_name: 'ContainsWordsScorer', target_words: ['refund'] }, 'thanks')).toEqual({
      output: { contains_words: false },
    });
    expect(await score({ _class_name: 'ContainsWordsScorer' }, 'x')).toMatchObject({ error: expect.stringContaining('target_words') });
    expect(await score({ _class_name: 'LengthScorer', min_length: 2, max_length: 5 }, 'héllo')).toEqual({
      output: { length: 5, length_valid: true },
    });
    expect(await score({ _class_name: 'LengthScorer', max_length: 3 }, 'hello')).toEqual({ output: { length: 5, length_valid: false } });
  });

  it('any other class is an error result naming those weft runs', async () => {
    expect(await score({ _class_name: 'HallucinationFreeScorer' }, 'x')).toMatchObject({
      error: expect.stringContaining('RegexScorer'),
    });
  });
});
