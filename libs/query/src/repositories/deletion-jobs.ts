import { localTable, physicalDeleteStatement, type Store } from '@weft/store';
import type { TableRows } from './calls';

/**
 * Every statement of the deletion jobs (services/gateway deletion-jobs.ts runs them): the jobs
 * themselves (deletion_jobs), the tables a project's job deletes from, and each step's physical
 * delete, the rows it has left and the mutations still running on its tables. A step is a table
 * and a condition on `{target:String}`, the job's target (the calls' USER_CALL_ROWS, feedback's
 * and the annotation queues' rows of a user, PROJECT_ROWS_WHERE).
 */

export type DeletionKind = 'project' | 'user';

/** A job as deletion_jobs keeps it (times in the engine's text form, UTC). */
export interface DeletionJobRow {
  id: string;
  kind: DeletionKind;
  target: string;
  requested_by: string;
  requested_at: string;
  state: 'running' | 'done' | 'failed';
  error: string | null;
}

/** A project's rows in any table with a `project_id` column. */
export const PROJECT_ROWS_WHERE = 'project_id = {target:String}';

/** Writes a job's current state (the latest row wins). */
export async function recordDeletionJob(store: Store, job: DeletionJobRow, updatedAt: string): Promise<void> {
  await store.insertRows('deletion_jobs', [{ ...job, updated_at: updatedAt }], { name: 'deletion-jobs.record' });
}

export async function readDeletionJob(store: Store, id: string): Promise<DeletionJobRow | null> {
  return (
    (await store.row<DeletionJobRow>(
      `SELECT id, kind, target, requested_by, toString(requested_at) AS requested_at, state, error
        FROM deletion_jobs FINAL WHERE id = {id:String}`,
      { id },
      { name: 'deletion-jobs.read' },
    )) ?? null
  );
}

/**
 * Every table of the database with a `project_id` column, by name (read from the engine, so a
 * table added later is covered); on a cluster the Distributed tables (the deletes run on their
 * local tables).
 */
export async function tablesWithProjectRows(store: Store): Promise<string[]> {
  const engine = store.cluster ? "engine = 'Distributed'" : "engine LIKE '%MergeTree'";
  const rows = await store.rows<{ name: string }>(
    `SELECT name FROM system.tables
      WHERE database = currentDatabase() AND ${engine}
        AND name IN (SELECT table FROM system.columns WHERE database = currentDatabase() AND name = 'project_id')
      ORDER BY name`,
    undefined,
    { name: 'deletion-plan.deletionSteps' },
  );
  return rows.map((r) => r.name);
}

/** Deletes a step's rows physically, waiting for the mutation to end (the steps after may depend on them). */
export async function deleteStepRows(store: Store, step: TableRows, target: string): Promise<void> {
  await store.command(
    physicalDeleteStatement(step.table, step.where, store.cluster),
    { target },
    { name: 'deletion-jobs.step', settings: { mutations_sync: store.cluster ? '2' : '1' } },
  );
}

/** Rows of the step still in the table's parts, masked ones included. */
export async function stepRowsLeft(store: Store, step: TableRows, target: string): Promise<number> {
  const left = await store.row<{ n: string }>(
    `SELECT count() AS n FROM ${step.table} WHERE ${step.where} SETTINGS apply_deleted_mask = 0`,
    { target },
    { name: 'deletion-jobs.rowsLeft' },
  );
  return Number(left?.n ?? 0);
}

/** Mutations not done yet on these tables (on a cluster: on any replica, of their local tables). */
export async function pendingMutations(store: Store, tables: string[]): Promise<number> {
  const mutations = store.cluster ? `clusterAllReplicas('${store.cluster}', system.mutations)` : 'system.mutations';
  const names = tables.map((t) => (store.cluster ? localTable(t) : t));
  const unfinished = await store.row<{ n: string }>(
    `SELECT count() AS n FROM ${mutations} WHERE database = currentDatabase() AND NOT is_done AND has({tables:Array(String)}, table)`,
    { tables: names },
    { name: 'deletion-jobs.statusOf' },
  );
  return Number(unfinished?.n ?? 0);
}
