import { z } from 'zod';
import { anyJson, limit, offset, projectId } from './common';

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
