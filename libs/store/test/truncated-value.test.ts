import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TRUNCATED_MARKER, truncateOversized, type TruncatedValue } from '../src/truncated-value';

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');
const run = (v: unknown, max: number) => truncateOversized(v, JSON.stringify(v), max);

describe('truncateOversized', () => {
  it('keeps every value within the limit as it is, the same object and text', () => {
    const v = { a: 'x'.repeat(100), b: [1, 2, 3] };
    const json = JSON.stringify(v);
    const r = truncateOversized(v, json, 1000);
    expect(r.value).toBe(v);
    expect(r.json).toBe(json);
    // 0: no limit at all.
    expect(run({ a: 'x'.repeat(10_000) }, 0).value).toEqual({ a: 'x'.repeat(10_000) });
  });

  it('replaces only the members over the limit with a marker holding their size and start', () => {
    const big = 'é'.repeat(5000); // 2 bytes each
    const r = run({ big, small: 'ok', nested: { deep: 'x'.repeat(3000) } }, 2048);
    const out = r.value as Record<string, TruncatedValue | string>;
    expect(out.small).toBe('ok');
    const marker = out.big as TruncatedValue;
    expect(marker[TRUNCATED_MARKER]).toBe(true);
    expect(marker.original_bytes).toBe(bytes(JSON.stringify(big)));
    expect(big.startsWith(marker.preview)).toBe(true);
    expect(marker.preview.length).toBeGreaterThan(0);
    // A member that is an object: its JSON text's start.
    const nested = out.nested as TruncatedValue;
    expect(nested.original_bytes).toBe(bytes(JSON.stringify({ deep: 'x'.repeat(3000) })));
    expect(nested.preview.startsWith('{"deep":"xxx')).toBe(true);
    expect(JSON.parse(r.json)).toEqual(r.value);
  });

  it('marks a non-object value (an output string, an array) as a whole', () => {
    const r = run('y'.repeat(10_000), 1024);
    expect((r.value as TruncatedValue).original_bytes).toBe(10_002);
    const arr = run(Array(1000).fill('abc'), 1024);
    expect((arr.value as TruncatedValue).preview.startsWith('["abc","abc"')).toBe(true);
  });

  it('property: every stored member is within the limit, never splits a character, and is the value or its marker', () => {
    const member = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 3000 }), fc.array(fc.string(), { maxLength: 300 }), fc.integer());
    fc.assert(
      fc.property(fc.dictionary(fc.string({ minLength: 1, maxLength: 5 }), member), fc.integer({ min: 300, max: 4000 }), (obj, max) => {
        const r = run(obj, max);
        const out = r.value as Record<string, unknown>;
        expect(Object.keys(out)).toEqual(Object.keys(obj));
        for (const [k, v] of Object.entries(out)) {
          expect(bytes(JSON.stringify(v))).toBeLessThanOrEqual(max);
          if (v !== null && typeof v === 'object' && TRUNCATED_MARKER in v) {
            const m = v as TruncatedValue;
            const sent = obj[k];
            expect(m.original_bytes).toBe(bytes(JSON.stringify(sent)));
            expect(m.original_bytes).toBeGreaterThan(max);
            expect((typeof sent === 'string' ? sent : JSON.stringify(sent)).startsWith(m.preview)).toBe(true);
            expect(m.preview).not.toMatch(/[\ud800-\udbff]$/);
          } else expect(v).toEqual(obj[k]);
        }
      }),
      { numRuns: 200 },
    );
  });
});
