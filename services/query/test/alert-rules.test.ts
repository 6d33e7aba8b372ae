import { describe, expect, it } from 'vitest';
import { alertNameOf, readAlertRule } from '../src/alerts/alert-spec';
import { nextState } from '../src/alerts/measure';
import { channelBody, retryDelayMs, signature, type AlertNotification } from '../src/alerts/notify';

const P = 'acme/app';
const spec = (s: Record<string, unknown>, opScope?: string[]) => ({ op_scope: opScope ?? null, spec: s });

describe('AlertSpec → rule', () => {
  it('reads the SDK fields, defaults the window to the last 10 calls and the band to 5% of the threshold', () => {
    const r = readAlertRule(
      P,
      'low',
      'abc',
      spec({ metric_path: 'output.score', comparison_operator: 'LESS_THAN', threshold: 0.5 }, [`weave:///${P}/op/answer:*`]),
    );
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.rule).toMatchObject({
      ref: `weave:///${P}/object/low:abc`,
      aggregation: 'mean',
      windowSize: 10,
      windowDuration: null,
      band: 0.025,
      source: { kind: 'calls', opNames: [`weave:///${P}/op/answer:*`], metric: 'output.score' },
    });
  });

  it('status match: an empty path is the call status, span status code 2 reads as error', () => {
    const r = readAlertRule(
      P,
      'e',
      'd',
      spec({ aggregation_function: 'percentage', status_match_value: '2', threshold: 5, window_duration: 300 }),
    );
    expect(r.ok && r.rule).toMatchObject({ statusMatch: 'error', windowSize: null, windowDuration: 300, source: { metric: 'status' } });
  });

  it("a monitor's scores: the path is under the scorer's output; refs are matched by name, any version", () => {
    const r = readAlertRule(
      P,
      'm',
      'd',
      spec({ metric_path: 'helpful', monitor_ref: `weave:///${P}/object/mon:111`, scorer_ref: `weave:///${P}/object/judge:222` }),
    );
    expect(r.ok && r.rule.source).toEqual({
      kind: 'monitor',
      monitorPrefix: `weave:///${P}/object/mon:`,
      scorerPrefix: `weave:///${P}/object/judge:`,
      path: ['output', 'helpful'],
    });
  });

  it('refuses what it cannot evaluate, saying why', () => {
    const why = (s: Record<string, unknown>, scope?: string[]) => {
      const r = readAlertRule(P, 'x', 'd', spec(s, scope));
      return r.ok ? null : r.reason;
    };
    expect(why({ metric_path: 'score' })).toMatch(/neither a figure/);
    expect(why({ metric_path: 'output.x' }, ['weave:///other/proj/op/a:*'])).toMatch(/not an op ref of acme\/app/);
    expect(why({ metric_path: 'output.x', monitor_ref: 'weave:///other/proj/object/m:1' })).toMatch(/monitor_ref/);
    expect(why({ metric_path: 'output.x', aggregation_function: 'p42x' })).toMatch(/aggregation/);
    expect(why({ metric_path: 'status', aggregation_function: 'mean' })).toMatch(/percentage or count/);
    expect(why({ metric_path: 'output.x', window_size: 0 })).toMatch(/window_size/);
  });

  it('an alert_ref names an alert of the project, or nothing', () => {
    expect(alertNameOf(`weave:///${P}/object/low:*`, P)).toBe('low');
    expect(alertNameOf(`weave:///${P}/object/low:abc`, P)).toBe('low');
    expect(alertNameOf('low', P)).toBe('low');
    expect(alertNameOf('weave:///other/p/object/low:abc', P)).toBeNull();
    expect(alertNameOf('a/b', P)).toBeNull();
  });
});

describe('transitions', () => {
  const below = { comparison: 'LESS_THAN' as const, threshold: 0.5, band: 0.025 };
  it('fires on crossing, not on the threshold; resolves only past the band', () => {
    expect(nextState('ok', 0.5, below)).toBe('ok');
    expect(nextState('ok', 0.49, below)).toBe('firing');
    expect(nextState('firing', 0.5, below)).toBe('firing');
    expect(nextState('firing', 0.52, below)).toBe('firing');
    expect(nextState('firing', 0.53, below)).toBe('resolved');
    expect(nextState('resolved', 0.5, below)).toBe('resolved');
    expect(nextState('resolved', 0.4, below)).toBe('firing');
    expect(nextState('firing', null, below)).toBe('firing');
  });
  it('GREATER_THAN and EQUAL mirror it', () => {
    const above = { comparison: 'GREATER_THAN' as const, threshold: 10, band: 1 };
    expect(nextState('ok', 10, above)).toBe('ok');
    expect(nextState('ok', 10.1, above)).toBe('firing');
    expect(nextState('firing', 9.5, above)).toBe('firing');
    expect(nextState('firing', 8.9, above)).toBe('resolved');
    const equal = { comparison: 'EQUAL' as const, threshold: 0, band: 0 };
    expect(nextState('ok', 0, equal)).toBe('firing');
    expect(nextState('firing', 0, equal)).toBe('firing');
    expect(nextState('firing', 1, equal)).toBe('resolved');
  });
});

describe('notifications', () => {
  const n: AlertNotification = {
    id: 'e1',
    state: 'firing',
    alert: 'low',
    alert_ref: 'r',
    project_id: P,
    value: 0.25,
    threshold: 0.5,
    comparison_operator: 'LESS_THAN',
    aggregation: 'mean',
    metric_path: 'output.score',
    window: { size: 10, duration_seconds: null, calls: 10 },
    calls_link: '/#/p/acme/app/calls',
    time: '2026-01-01T00:00:00.000Z',
    description: null,
  };
  it('JSON is the notification; Slack a text line', () => {
    expect(JSON.parse(channelBody({ format: 'json' }, n))).toEqual(n);
    expect(JSON.parse(channelBody({ format: 'slack' }, n))).toEqual({
      text: ':rotating_light: *low* is *firing* in acme/app: mean(output.score) = 0.25 (threshold < 0.5; last 10 calls, 10 calls)',
    });
  });
  it('the signature is HMAC-SHA256 of the body; retries back off to the cap', () => {
    expect(signature('k', 'body')).toBe('sha256=c6d811ef3aeb02437cd423f1abe13209041864630bdc4e2c04def5c7b0031a23');
    expect(signature('k', 'body')).not.toBe(signature('k2', 'body'));
    expect([1, 2, 3, 4, 10].map((a) => retryDelayMs(a, 5000))).toEqual([1000, 2000, 4000, 5000, 5000]);
  });
});
