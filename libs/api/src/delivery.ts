import { z } from 'zod';
import { ENTRANCES } from '@weft/core';
import { projectId } from './common';
import type { RouteSpec } from './spec';

/** Visible delivery (libs/core delivery.ts): what became of the calls sent, per project and entrance, and the ack→queryable lag. */
const partCount = z.number().int();
const deliveryCounts = z.object({
  accepted: partCount.describe('call parts (a start, an end) acknowledged to clients, sampled-out ones included'),
  stored: partCount.describe('call parts stored (queryable)'),
  dead_lettered: partCount.describe('call parts the store refused for good, moved to the dead letters'),
  sampled_out: partCount.describe("call parts dropped by the project's ingest sampling rate"),
  would_sample_out: partCount.describe('call parts a dry-run sampling rate would have dropped (kept)'),
  replayed: partCount.describe('dead-lettered call parts published again'),
  refused: z
    .record(z.string(), z.number().int())
    .describe('requests refused whole, by reason (too_large, rate_limited, bus_full, invalid, …)'),
  spans_rejected: z.record(z.string(), z.number().int()).describe('OTLP spans refused inside an accepted request, by reason'),
});

export const deliveryLag = z.object({
  seconds: z
    .number()
    .nullable()
    .describe(
      'current ack→queryable lag: the age of the oldest part acknowledged and not yet stored (0: none); a writer alone: its last parts’; null where nothing is stored',
    ),
  pending_parts: z.number().int().nullable().describe('parts acknowledged and not yet stored (where this process does both)'),
  last_stored_seconds: z.number().nullable().describe('ack→stored time of the last parts stored (the slowest of that batch)'),
  last_stored_at: z.string().nullable(),
});

const counted = {
  since: z.string().describe('counting began when this process started'),
  reports: z
    .array(z.enum(['accepted', 'stored']))
    .describe('what this process counts: accepted and refused (gateway, inference), stored (writer)'),
  lag_warning_seconds: z.number().describe('WEFT_DELIVERY_LAG_WARN_MS'),
};

export const projectDeliveryReq = z.object({ project_id: projectId });
export const projectDeliveryRes = z.object({
  project_id: z.string(),
  ...counted,
  entrances: z.array(deliveryCounts.extend({ entrance: z.enum([...ENTRANCES, 'unknown']) })),
  total: deliveryCounts,
  lag: deliveryLag,
  lag_over_warning: z.boolean(),
});

export const projectsDeliveryReq = z.object({});
export const projectsDeliveryRes = z.object({
  ...counted,
  projects: z.array(
    z.object({
      project_id: z.string().nullable().describe('null: requests refused before their project was known (admin keys only)'),
      total: deliveryCounts,
      lag: deliveryLag,
      lag_over_warning: z.boolean(),
    }),
  ),
});

/** Visible delivery (docs/operations.md "Visible delivery"): the counts of the process that answers. */
export const deliveryRouteSpecs = {
  projectDelivery: {
    path: '/project/delivery',
    summary:
      "What became of a project's calls per entrance (accepted, stored, refused by reason, dead-lettered, sampled out) and its ack→queryable lag",
    auth: 'basic',
    service: 'gateway',
    request: projectDeliveryReq,
    response: projectDeliveryRes,
    published: true,
  },
  projectsDelivery: {
    path: '/projects/delivery',
    summary: 'Delivery totals and lag of every project the key can see (admin keys: also refusals whose project was not known)',
    auth: 'basic',
    service: 'gateway',
    request: projectsDeliveryReq,
    response: projectsDeliveryRes,
    published: true,
  },
} as const satisfies Record<string, RouteSpec>;
