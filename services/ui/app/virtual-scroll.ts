/**
 * Browsers cap an element's height (Chromium near 33.5M px, Firefox near 17.9M): a spacer of
 * `rows × rowPx` past that is cut, and the rows beyond it cannot be scrolled to (at 34 px a row,
 * from about row 987,000). So the spacer stops at this height and, past it, one pixel of
 * scrolling moves more than one pixel of rows.
 */
export const MAX_SPACER_PX = 8_000_000;

export interface ScrollWindow {
  /** The spacer's height (what the scrollbar spans). */
  spacerPx: number;
  /** Pixels of rows per pixel of scrolling: 1 until the cap. */
  ratio: number;
  /** Where the viewport's top falls in the rows' own coordinates. */
  rowsTop: number;
  /** The rows to render: [first, last). */
  first: number;
  last: number;
}

export function scrollWindow(o: {
  scrollTop: number;
  viewPx: number;
  rows: number;
  rowPx: number;
  overscan: number;
  maxSpacerPx?: number;
}): ScrollWindow {
  const contentPx = o.rows * o.rowPx;
  const spacerPx = Math.min(contentPx, o.maxSpacerPx ?? MAX_SPACER_PX);
  const ratio = spacerPx > o.viewPx && contentPx > spacerPx ? (contentPx - o.viewPx) / (spacerPx - o.viewPx) : 1;
  const rowsTop = o.scrollTop * ratio;
  const first = Math.max(0, Math.floor(rowsTop / o.rowPx) - o.overscan);
  const last = Math.min(o.rows, Math.ceil((rowsTop + o.viewPx) / o.rowPx) + o.overscan);
  return { spacerPx, ratio, rowsTop, first, last };
}

/** A row's offset inside the spacer (translateY): its place relative to the viewport's top, kept in view. */
export function rowOffset(w: ScrollWindow, scrollTop: number, row: number, rowPx: number): number {
  return scrollTop + row * rowPx - w.rowsTop;
}

/** The scrollTop whose viewport starts at `y` in the rows' own coordinates. */
export function scrollTopShowing(w: ScrollWindow, y: number): number {
  return y / w.ratio;
}
