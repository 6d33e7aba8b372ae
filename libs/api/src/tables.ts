import { z } from 'zod';
import { anyJson, jsonObject, limit, offset, projectId, tableSortBy } from './common';
import type { RouteSpec } from './spec';

export const tableRow = z.object({ digest: z.string(), val: anyJson, original_index: z.number().int() });

export const tableQueryReq = z.object({
  project_id: projectId,
  digest: z.string().min(1),
  filter: z.object({ row_digests: z.array(z.string()).optional() }).optional(),
  limit: limit.optional(),
  offset: offset.optional(),
  sort_by: tableSortBy.optional(),
});
export const tableQueryRes = z.object({ rows: z.array(tableRow) });

const tableUpdateSpec = z.union([
  z.object({ append: z.object({ row: jsonObject }) }),
  z.object({ pop: z.object({ index: z.number().int() }) }),
  z.object({ insert: z.object({ index: z.number().int(), row: jsonObject }) }),
]);
export const tableUpdateReq = z.object({
  project_id: projectId,
  base_digest: z.string().min(1),
  updates: z.array(tableUpdateSpec),
});
export const tableUpdateRes = z.object({ digest: z.string(), updated_row_digests: z.array(z.string()) });

export const tableCreateReq = z.object({
  table: z.object({
    project_id: projectId,
    rows: z.array(jsonObject),
    expected_digest: z.string().nullish(),
  }),
});
export const tableCreateRes = z.object({ digest: z.string(), row_digests: z.array(z.string()) });

export const tableQueryStatsReq = z.object({ project_id: projectId, digest: z.string().min(1) });
export const tableQueryStatsBatchReq = z.object({
  project_id: projectId,
  digests: z.array(z.string().min(1)).max(1000).default([]),
  include_storage_size: z.boolean().default(false),
});

/** Rows per version a diff compares at most: both versions' row digests are held while pairing. */
export const MAX_TABLE_DIFF_ROWS = 250_000;
/** Entries one /table/diff answer carries at most (page through the rest with offset). */
export const MAX_TABLE_DIFF_ENTRIES = 1000;

export const tableDiffReq = z.object({
  project_id: projectId,
  base_digest: z.string().min(1).describe('the older version (a table digest)'),
  digest: z.string().min(1).describe('the newer version (a table digest)'),
  limit: limit
    .max(MAX_TABLE_DIFF_ENTRIES, `at most ${MAX_TABLE_DIFF_ENTRIES} entries a page`)
    .optional()
    .describe('entries returned (absent or 0: 100)'),
  offset: offset.optional(),
});
export type TableDiffReq = z.infer<typeof tableDiffReq>;

export const tableDiffEntry = z.object({
  kind: z.enum(['added', 'removed', 'changed']),
  base_index: z.number().int().nullable().describe("the row's position in the base version (removed, changed)"),
  index: z.number().int().nullable().describe("the row's position in the newer version (added, changed)"),
  base_digest: z.string().nullable(),
  digest: z.string().nullable(),
  base_val: anyJson.describe('the row in the base version (null when added)'),
  val: anyJson.describe('the row in the newer version (null when removed)'),
});
export type TableDiffEntry = z.infer<typeof tableDiffEntry>;

export const tableDiffRes = z.object({
  base_count: z.number().int(),
  count: z.number().int(),
  added: z.number().int().describe('rows of the newer version whose digest the base lacks, not paired as changed'),
  removed: z.number().int().describe('rows of the base whose digest the newer version lacks, not paired as changed'),
  changed: z.number().int().describe('a removed row and an added row at the same place between unchanged rows'),
  unchanged: z.number().int(),
  entries: z.array(tableDiffEntry).describe('this page of the differences, in table order'),
});
export type TableDiffRes = z.infer<typeof tableDiffRes>;

/** Tables beyond the interface's 20: create from rows, row counts, two versions compared. */
export const tableRouteSpecs = {
  tableCreate: {
    path: '/table/create',
    summary: 'Create a table from rows',
    auth: 'basic',
    service: 'gateway',
    request: tableCreateReq,
    response: tableCreateRes,
  },
  tableQueryStats: {
    path: '/table/query_stats',
    summary: 'Count the rows of a table',
    auth: 'basic',
    service: 'query',
    request: tableQueryStatsReq,
  },
  tableQueryStatsBatch: {
    path: '/table/query_stats_batch',
    summary: 'Count the rows of tables',
    auth: 'basic',
    service: 'query',
    request: tableQueryStatsBatchReq,
  },
  tableDiff: {
    path: '/table/diff',
    summary: "Two versions of a table (a dataset's rows) compared by row digest: rows added, removed and changed, paged",
    auth: 'basic',
    service: 'query',
    request: tableDiffReq,
    response: tableDiffRes,
    published: true,
  },
} as const satisfies Record<string, RouteSpec>;
