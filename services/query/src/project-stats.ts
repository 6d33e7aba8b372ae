import type { RouteRequestOf } from '@weft/api';
import { badRequest } from '@weft/core';
import { projectStorageBytes } from '@weft/objects';
import type { Store } from '@weft/store';

/**
 * POST /project/stats (the reference's ProjectStatsReq): bytes of a project's stored JSON, each
 * stored thing once — calls (attributes, inputs, output, summary, as storage_size_bytes
 * counts), object versions, table rows, files. A part not asked for reads 0 (libs/objects
 * projects.ts: one statement).
 */
export async function projectStats(store: Store, req: RouteRequestOf<'projectStats'>, signal: AbortSignal) {
  const want = {
    trace: req.include_trace_storage_size,
    objects: req.include_object_storage_size,
    tables: req.include_table_storage_size,
    files: req.include_file_storage_size,
  };
  if (!want.trace && !want.objects && !want.tables && !want.files) {
    throw badRequest(
      'include_trace_storage_size: at least one of the include_*_storage_size options must be true',
      'include_trace_storage_size',
    );
  }
  return projectStorageBytes(store, req.project_id, want, signal);
}
