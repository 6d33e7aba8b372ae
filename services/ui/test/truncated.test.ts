import { describe, expect, it } from 'vitest';
import { truncatedMarker, truncatedNote } from '../app/truncated';

describe('a value weft stored truncated', () => {
  it('is recognised only in the marker shape', () => {
    expect(truncatedMarker({ _weft_truncated: true, original_bytes: 3_000_000, preview: 'abc' })).toEqual({
      originalBytes: 3_000_000,
      preview: 'abc',
    });
    for (const v of [null, 'x', [1], { _weft_truncated: 'yes', original_bytes: 1, preview: '' }, { _weft_truncated: true, preview: 'a' }])
      expect(truncatedMarker(v)).toBeNull();
  });

  it('says how much of how much is shown', () => {
    expect(truncatedNote({ originalBytes: 3 * 1024 * 1024, preview: 'é'.repeat(1024) })).toBe(
      "Truncated when stored: the first 2 KB of 3.0 MB (over the server's WEFT_MAX_VALUE_BYTES).",
    );
  });
});
