import { callsStorageBytesSql, Params, projectCallActivitySql } from '@weft/query';
import type { Store } from '@weft/store';
import { filesStorageBytesSql } from './files';
import { objectsStorageBytesSql, projectObjectActivitySql } from './objects';
import { tablesStorageBytesSql } from './tables';

/**
 * Statements over a whole project, each one statement composed from the repositories' fragments
 * (the calls' in libs/query; objects', tables', files' here): the projects with their activity,
 * a project's stored bytes. A project exists once something was written to it (calls or objects).
 */

/** A project's calls, object versions and last activity (µs since the epoch, 0: none). */
export interface ProjectActivityRow {
  project_id: string;
  call_count: string | number;
  object_count: string | number;
  last_us: string | number;
}

/**
 * The projects whose id starts with one of `prefixes` (`<entity>/`; null: every project), with
 * their call and object-version counts and last activity, most recently active first.
 */
export async function projectsByActivity(store: Store, prefixes: string[] | null, limit: number): Promise<ProjectActivityRow[]> {
  const p = new Params();
  let scope = '1';
  if (prefixes !== null) {
    const terms = prefixes.map((prefix) => `startsWith(project_id, ${p.str(prefix)})`);
    scope = terms.length === 1 ? terms[0]! : `(${terms.join(' OR ')})`;
  }
  const sql = `SELECT project_id, toInt64(sum(calls)) AS call_count, toInt64(sum(objects)) AS object_count, max(last) AS last_us FROM (
    ${projectCallActivitySql(scope)}
    UNION ALL
    ${projectObjectActivitySql(scope)}
  ) GROUP BY project_id ORDER BY last_us DESC, project_id LIMIT ${p.int(limit)}`;
  return store.rows<ProjectActivityRow>(sql, p.values, { name: 'analytics.listProjects' });
}

/**
 * Bytes of a project's stored JSON, each stored thing once — calls (attributes, inputs, output,
 * summary, as storage_size_bytes counts), object versions, table rows, files; 0 for a part not wanted.
 */
export async function projectStorageBytes(
  store: Store,
  projectId: string,
  want: { trace: boolean; objects: boolean; tables: boolean; files: boolean },
  signal: AbortSignal,
): Promise<{
  trace_storage_size_bytes: number;
  objects_storage_size_bytes: number;
  tables_storage_size_bytes: number;
  files_storage_size_bytes: number;
}> {
  const p = new Params();
  const pid = p.str(projectId);
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
