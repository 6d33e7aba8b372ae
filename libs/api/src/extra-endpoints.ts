import { z } from 'zod';
import type { AuthScheme } from '@weft/core';
import { jsonObject, projectId } from './common';
import type { ServiceName } from './endpoints';
import { callsAggregateReq, callsAggregateRes, projectsListReq, projectsListRes } from './analytics';

/**
 * Endpoints the reference's clients need beyond the interface's 20 (see README, "Extra
 * endpoints"). Kept out of `endpoints` so the published contract stays exactly the interface.
 */
export interface ExtraEndpointSpec {
  path: string;
  summary: string;
  auth: AuthScheme;
  service: ServiceName;
  request: z.ZodType;
  /** Published in /openapi.json (as an extra) with this response; absent: kept out of the document. */
  response?: z.ZodType;
}

export const tableCreateExtraReq = z.object({
  table: z.object({
    project_id: projectId,
    rows: z.array(jsonObject),
    expected_digest: z.string().nullish(),
  }),
});

export const refsReadBatchReq = z.object({
  refs: z.array(z.string()).max(1000, 'Too many refs (at most 1000)'),
});

export const extraEndpoints = {
  tableCreate: { path: '/table/create', summary: 'Create a table from rows', auth: 'basic', service: 'gateway', request: tableCreateExtraReq },
  refsReadBatch: { path: '/refs/read_batch', summary: 'Read the values of object refs', auth: 'basic', service: 'query', request: refsReadBatchReq },
  // For the web UI (services/ui); published in /openapi.json.
  projectsList: { path: '/projects/list', summary: 'Projects the key can see, with call counts and last activity', auth: 'basic', service: 'query', request: projectsListReq, response: projectsListRes },
  callsAggregate: { path: '/calls/aggregate', summary: 'Calls, errors, latency, tokens and cost over time, per op and per model', auth: 'basic', service: 'query', request: callsAggregateReq, response: callsAggregateRes },
} as const satisfies Record<string, ExtraEndpointSpec>;

export type ExtraEndpointName = keyof typeof extraEndpoints;
export type ExtraRequestOf<N extends ExtraEndpointName> = z.infer<(typeof extraEndpoints)[N]['request']>;
