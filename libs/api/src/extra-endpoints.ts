import { z } from 'zod';
import { jsonObject, projectId } from './common';
import { costCreateReq, costCreateRes, tableCreateRes } from './objects';
import type { EndpointSpec } from './endpoints';

/**
 * Endpoints the reference's clients need beyond the interface's 20 (see README, "Extra
 * endpoints"). Kept out of `endpoints` so the published contract stays exactly the interface;
 * registered the same way (addRoute) and routed the same way (the front proxy, by `service`).
 */
export type ExtraEndpointSpec = EndpointSpec;

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
export const refsReadBatchRes = z.object({ vals: z.array(z.unknown()) });

export const extraEndpoints = {
  tableCreate: { path: '/table/create', summary: 'Create a table from rows', auth: 'basic', service: 'gateway', request: tableCreateExtraReq, response: tableCreateRes },
  refsReadBatch: { path: '/refs/read_batch', summary: 'Read the values of object refs', auth: 'basic', service: 'query', request: refsReadBatchReq, response: refsReadBatchRes },
  costCreate: { path: '/cost/create', summary: 'Add project-level prices', auth: 'basic', service: 'query', request: costCreateReq, response: costCreateRes },
} as const satisfies Record<string, ExtraEndpointSpec>;

export type ExtraEndpointName = keyof typeof extraEndpoints;
export type ExtraRequestOf<N extends ExtraEndpointName> = z.infer<(typeof extraEndpoints)[N]['request']>;
