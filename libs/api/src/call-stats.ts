import { z } from 'zod';
import { parseTimestampMicros } from '@weft/core';
import { callFilter, projectId, timestamp } from './common';
import type { RouteSpec } from './spec';

/**
 * POST /calls/stats (the reference's CallStatsReq): call and usage metrics per time bucket over
 * a range of at most 31 days; usage grouped by model as well.
 */

export const CALL_STATS_MAX_DAYS = 31;
export const USAGE_METRICS = ['input_tokens', 'output_tokens', 'total_tokens', 'input_cost', 'output_cost', 'total_cost'] as const;
export const CALL_METRICS = ['latency_ms', 'call_count', 'error_count'] as const;
export const STAT_AGGREGATIONS = ['sum', 'avg', 'min', 'max', 'count'] as const;

const metricSpec = <M extends readonly [string, ...string[]]>(metrics: M) =>
  z.object({
    metric: z.enum(metrics),
    aggregations: z.array(z.enum(STAT_AGGREGATIONS)).default(['sum']),
    percentiles: z.array(z.number().min(0).max(100)).default([]).describe('0–100, e.g. [50, 95, 99]'),
  });

const isTimeZone = (tz: string) => {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
};

export const callStatsReq = z
  .object({
    project_id: projectId,
    start: timestamp.describe('inclusive start'),
    end: timestamp.optional().describe('exclusive end (default: now)'),
    granularity: z.number().int().min(1).optional().describe('bucket width in seconds (default: chosen from the range)'),
    usage_metrics: z.array(metricSpec(USAGE_METRICS)).optional().describe('tokens and cost, per bucket and model'),
    call_metrics: z.array(metricSpec(CALL_METRICS)).optional().describe('latency and counts, per bucket'),
    filter: callFilter.optional(),
    timezone: z.string().default('UTC').refine(isTimeZone, 'must be an IANA time zone').describe('IANA time zone the buckets align to'),
  })
  .superRefine((req, ctx) => {
    const start = parseTimestampMicros(req.start);
    const end = req.end === undefined ? Date.now() * 1000 : parseTimestampMicros(req.end);
    if (start === null || end === null) return;
    if (end < start) ctx.addIssue({ code: 'custom', path: ['end'], message: 'must be after start' });
    else if (end - start > CALL_STATS_MAX_DAYS * 86_400e6) {
      ctx.addIssue({ code: 'custom', path: ['end'], message: `the range cannot exceed ${CALL_STATS_MAX_DAYS} days` });
    }
  });

const bucket = z.record(z.string(), z.unknown());
export const callStatsRes = z.object({
  start: z.string(),
  end: z.string(),
  granularity: z.number().int().describe('bucket width used, in seconds'),
  timezone: z.string(),
  usage_buckets: z.array(bucket).describe('per bucket and model: `timestamp`, `model`, `<aggregation>_<metric>`…, `count`'),
  call_buckets: z.array(bucket).describe('per bucket: `timestamp`, `<aggregation>_<metric>`…, `count`'),
});

/** Call and usage metrics per time bucket. */
export const callStatsRouteSpecs = {
  callStats: {
    path: '/calls/stats',
    summary: 'Call and usage metrics per time bucket',
    auth: 'basic',
    service: 'query',
    request: callStatsReq,
    response: callStatsRes,
  },
} as const satisfies Record<string, RouteSpec>;
