import { describe, expect, it } from 'vitest';
import { toCsv } from '../src/read';

describe('weft analytics --format csv', () => {
  it('writes figures without float noise (issue 53, item 9)', () => {
    expect(toCsv([{ model: 'gpt-4o', cost: 0.002249999999999985, latency: 178.1199999999999, calls: 3 }])).toBe(
      'model,cost,latency,calls\r\ngpt-4o,0.00225,178.12,3\r\n',
    );
  });
});
