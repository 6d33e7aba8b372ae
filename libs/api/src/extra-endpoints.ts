import { z } from 'zod';
import type { AuthScheme } from '@weft/core';
import { jsonObject, projectId } from './common';
import { embeddingReq, textCompletionReq } from './inference';
import type { ServiceName } from './endpoints';

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
  textCompletions: { path: '/v1/completions', summary: 'Create a (legacy, prompt) completion (OpenAI-compatible)', auth: 'bearer', service: 'inference', request: textCompletionReq },
  embeddings: { path: '/v1/embeddings', summary: 'Create embeddings (OpenAI-compatible, passed through)', auth: 'bearer', service: 'inference', request: embeddingReq },
} as const satisfies Record<string, ExtraEndpointSpec>;

export type ExtraEndpointName = keyof typeof extraEndpoints;
export type ExtraRequestOf<N extends ExtraEndpointName> = z.infer<(typeof extraEndpoints)[N]['request']>;
