import type { RouteRequestOf } from '@weft/api';
import { badRequest } from '@weft/core';
import { filesStorageBytesSql, objectsStorageBytesSql, tablesStorageBytesSql } from '@weft/objects';
import { callsStorageBytesSql, Params } from '@weft/query';
import type { Store } from '@weft/store';

/**
 * POST /project/stats (the reference's ProjectStatsReq): bytes of a project's stored JSON, each
 * stored thing once — calls (attributes, inputs, output, summary, as storage_size_bytes
 * counts), object versions, table rows, files. A part not asked for reads 0.
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
  const p = new Params();
  const pid = p.str(req.project_id);
  const part = (on: boolean, sql: string) => (on ? `toInt64(ifNull((${sql}), 0))` : 'toInt64(0)');
  const calls = callsStorageBytesSql(pid);
  const sql = `SELECT
    ${part(want.trace, calls.starts)} + ${part(want.trace, calls.ends)} AS trace_storage_size_bytes,
    ${part(want.objects, objectsStorageBytesSql(pid))} AS objects_storage_size_bytes,
    ${part(want.tables, tablesStorageBytesSql(pid))} AS tables_storage_size_bytes,
    ${part(want.files, filesStorageBytesSql(pid))} AS files_storage_size_bytes`;
  const [row] = await store.rows<Record<string, number | string>>(sql, p.values, { name: 'project-stats.projectStats', signal });
  return {
    trace_storage_size_bytes: Number(row?.trace_storage_size_bytes ?? 0),
    objects_storage_size_bytes: Number(row?.objects_storage_size_bytes ?? 0),
    tables_storage_size_bytes: Number(row?.tables_storage_size_bytes ?? 0),
    files_storage_size_bytes: Number(row?.files_storage_size_bytes ?? 0),
  };
}
