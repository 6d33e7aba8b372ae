import type { AnalyticsQueryReq } from '@weft/api';
import { roundFigure } from '@weft/core';
import { describe, expect, it } from 'vitest';
import { MetricsQueryPlan } from '../src/index';

/** Figures are rounded at the edge to 12 significant digits (issue 53, item 9: float noise). */
describe('figures at the edge', () => {
  it('roundFigure drops the noise of float sums, keeps every digit a figure has, leaves whole numbers', () => {
    expect(roundFigure(0.002249999999999985)).toBe(0.00225);
    expect(roundFigure(178.1199999999999)).toBe(178.12);
    expect(roundFigure(0.1 + 0.2)).toBe(0.3);
    expect(roundFigure(1.5e-9 * 3)).toBe(4.5e-9);
    expect(roundFigure(123456789.123)).toBe(123456789.123);
    expect(roundFigure(2 ** 60)).toBe(2 ** 60);
    expect(roundFigure(Number.NaN)).toBeNaN();
  });

  it("/analytics/query's metric values are rounded", () => {
    const req: AnalyticsQueryReq = {
      project_id: 'e/p',
      dimensions: ['model'],
      metrics: ['cost', 'latency_avg_ms', 'total_tokens'],
      limit: 1000,
      totals: false,
    };
    const plan = new MetricsQueryPlan(req);
    const { rows } = plan.rows([{ d0: 'gpt-4o', m0: 0.002249999999999985, m1: '178.1199999999999', m2: '40' }]);
    expect(rows).toEqual([{ model: 'gpt-4o', cost: 0.00225, latency_avg_ms: 178.12, total_tokens: 40 }]);
  });
});
