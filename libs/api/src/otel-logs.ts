import { z } from 'zod';
import { projectId } from './common';
import type { RouteSpec } from './spec';

/** `/otel/logs/query`: a project's stored OTLP log records, newest first, optionally those of one trace or span. */
export const otelLogsQueryReq = z.object({
  project_id: projectId,
  trace_id: z
    .string()
    .regex(/^[0-9a-f]{32}$/, 'must be 32 lowercase hex characters')
    .optional(),
  span_id: z
    .string()
    .regex(/^[0-9a-f]{16}$/, 'must be 16 lowercase hex characters')
    .optional(),
  event_name: z.string().min(1).max(256).optional(),
  limit: z.number().int().min(1).max(10_000).default(100),
  offset: z.number().int().min(0).default(0),
});

export const otelLogRecord = z.object({
  time: z.string(),
  observed_time: z.string(),
  trace_id: z.string().nullable(),
  span_id: z.string().nullable(),
  severity_number: z.number().int(),
  severity_text: z.string(),
  event_name: z.string(),
  body: z.unknown(),
  /** The body was over the stored limit and is cut (the marker). */
  body_truncated: z.boolean(),
  attributes: z.record(z.string(), z.unknown()),
  resource: z.record(z.string(), z.unknown()),
  scope: z.object({ name: z.string(), version: z.string() }),
});

export const otelLogsQueryRes = z.object({ logs: z.array(otelLogRecord) });
export type OtelLogsQueryReq = z.infer<typeof otelLogsQueryReq>;
export type OtelLogRecord = z.infer<typeof otelLogRecord>;

/** A project's OTLP log records. */
export const otelLogRouteSpecs = {
  otelLogsQuery: {
    path: '/otel/logs/query',
    summary: "A project's OTLP log records (GenAI events and others), newest first; of one trace or span if asked",
    auth: 'basic',
    service: 'query',
    request: otelLogsQueryReq,
    response: otelLogsQueryRes,
  },
} as const satisfies Record<string, RouteSpec>;
