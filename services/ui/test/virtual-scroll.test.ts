import { describe, expect, it } from 'vitest';
import { MAX_SPACER_PX, rowOffset, scrollTopShowing, scrollWindow } from '../app/virtual-scroll';

const ROW = 34;
const VIEW = 800;
const at = (rows: number, scrollTop: number) => scrollWindow({ scrollTop, viewPx: VIEW, rows, rowPx: ROW, overscan: 0 });

describe('the calls table scrolls to every row of any project', () => {
  it('is plain scrolling while the rows fit under the cap', () => {
    const w = at(1000, 3400);
    expect(w).toMatchObject({ spacerPx: 34_000, ratio: 1, first: 100 });
    expect(rowOffset(w, 3400, 100, ROW)).toBe(3400);
  });

  for (const rows of [1_000_000, 10_000_000]) {
    it(`reaches the last of ${rows.toLocaleString('en')} rows at the bottom of a spacer the browser can hold`, () => {
      const top = at(rows, 0);
      expect(top.spacerPx).toBe(MAX_SPACER_PX);
      // Well under Chromium's (~33.5M px) and Firefox's (~17.9M px) element height limits.
      expect(top.spacerPx).toBeLessThan(17_000_000);
      expect(top.first).toBe(0);
      const bottom = at(rows, top.spacerPx - VIEW);
      expect(bottom.last).toBe(rows);
      // The last row sits at the bottom of the viewport, inside the spacer.
      const y = rowOffset(bottom, top.spacerPx - VIEW, rows - 1, ROW);
      expect(y + ROW).toBeCloseTo(top.spacerPx, 3);
      // The middle of the scrollbar is the middle of the rows.
      const middle = at(rows, (top.spacerPx - VIEW) / 2);
      expect(Math.abs(middle.first - (rows - VIEW / ROW) / 2)).toBeLessThan(2);
    });
  }

  it('brings a row chosen with the keyboard into view', () => {
    const rows = 2_000_000;
    const w = at(rows, 0);
    const target = 1_234_567;
    const scrollTop = scrollTopShowing(w, target * ROW);
    const after = at(rows, scrollTop);
    expect(after.first).toBe(target);
    expect(rowOffset(after, scrollTop, target, ROW)).toBeCloseTo(scrollTop, 3);
  });
});
