/**
 * The precision of the computed figures weft answers with (costs, sums and averages of floats):
 * 12 significant digits. Float sums carry noise in their last digits (`0.002249999999999985`
 * for 0.00225); a float64 holds 15 to 17, so 12 keeps every digit a price or a measure has and
 * drops the noise. Whole numbers (token and call counts) are exact and left as they are.
 */
export const FIGURE_SIGNIFICANT_DIGITS = 12;

/** `v` rounded to FIGURE_SIGNIFICANT_DIGITS significant digits; whole and non-finite numbers as they are. */
export function roundFigure(v: number): number {
  if (!Number.isFinite(v) || Number.isInteger(v)) return v;
  return Number(v.toPrecision(FIGURE_SIGNIFICANT_DIGITS));
}
