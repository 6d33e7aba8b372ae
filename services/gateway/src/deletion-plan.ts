import { USER_FEEDBACK_ROWS, USER_QUEUE_ITEM_ROWS } from '@weft/objects';
import {
  CALLS_OF_USER_WHERE,
  PROJECT_ROWS_WHERE,
  tablesWithProjectRows,
  USER_CALL_ROWS,
  type DeletionKind,
  type TableRows,
} from '@weft/query';
import type { Store } from '@weft/store';

/** One physical delete of a job: a table and the rows that go (`{target:String}` is the job's target). */
export type DeletionStep = TableRows;

/**
 * A data-subject request: every call of a `svc_user_id` in every project, and what hangs on it
 * — the feedback on it, its annotation queue items, then its rows (USER_CALL_ROWS: the start
 * rows, which name the calls, last), so a job cut short and run again still finds what the
 * earlier steps were to delete.
 */
const USER_STEPS: readonly DeletionStep[] = [
  USER_FEEDBACK_ROWS,
  USER_QUEUE_ITEM_ROWS,
  ...USER_CALL_ROWS,
  // Analytics facts keep a copy of each call's user (libs/query call-facts.ts): last, once no
  // call of the user is left to build them from again.
  { table: 'call_facts', where: CALLS_OF_USER_WHERE },
];

/** Tables built from the others (analytics facts): a project's go last, once nothing is left to build them from. */
const DERIVED_TABLES = ['call_facts', 'call_facts_segments'];

/**
 * The steps of a job. A project's: every table of the database with a `project_id` column
 * (read from the engine, so a table added later is covered without a change here), all of
 * its rows. On a cluster the Distributed tables name them (the deletes run on their local tables).
 */
export async function deletionSteps(store: Store, kind: DeletionKind): Promise<DeletionStep[]> {
  if (kind === 'user') return [...USER_STEPS];
  const names = await tablesWithProjectRows(store);
  const ordered = [...names.filter((n) => !DERIVED_TABLES.includes(n)), ...names.filter((n) => DERIVED_TABLES.includes(n))];
  return ordered.map((table) => ({ table, where: PROJECT_ROWS_WHERE }));
}
