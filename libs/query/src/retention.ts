import { physicalDeleteStatement, type Store } from '@weft/store';
import type { Params } from './params';

/**
 * Which rows retention removes: per project, those older than its cutoff (now less its
 * retention days); a default cutoff for the projects that set none. Each table is judged by
 * the time it has (the calls' tables: repositories/calls.ts CALL_RETENTION; feedback: libs/objects).
 */
export interface RetentionCutoffs {
  /** Projects with their own retention (cutoffs in µs since the epoch). */
  projects: { projectId: string; cutoffUs: number }[];
  /** Projects that chose to keep everything (no default applies to them). */
  keepForever: string[];
  /** For every other project (absent: keep everything). */
  defaultCutoffUs?: number;
}

/** A table retention removes from, with the condition of its expired rows (null: nothing can expire). */
export interface RetentionTable {
  table: string;
  expired: (c: RetentionCutoffs, p: Params) => string | null;
}

/** The rows of a table past their project's cutoff, judged by the time column `time`, as a WHERE condition (null: nothing can expire). */
export function expiredRowsSql(c: RetentionCutoffs, time: string, p: Params): string | null {
  const at = (us: number) => `fromUnixTimestamp64Micro(${p.add(us, 'Int64')}, 'UTC')`;
  const terms = c.projects.map((r) => `(project_id = ${p.str(r.projectId)} AND ${time} < ${at(r.cutoffUs)})`);
  if (c.defaultCutoffUs !== undefined) {
    const own = [...c.projects.map((r) => r.projectId), ...c.keepForever];
    terms.push(`(${own.length ? `project_id NOT IN ${p.strArray(own)} AND ` : ''}${time} < ${at(c.defaultCutoffUs)})`);
  }
  return terms.length ? terms.join(' OR ') : null;
}

/** How many rows of `table` the condition `where` (with `values`, its parameters) matches: the rows a pass would remove. */
export async function countExpiredRows(store: Store, table: string, where: string, values: Record<string, unknown>): Promise<number> {
  const expired = await store.row<{ n: string }>(`SELECT count() AS n FROM ${table} WHERE ${where}`, values, { name: 'retention.count' });
  return Number(expired?.n ?? 0);
}

/**
 * Removes them physically (physicalDeleteStatement: the engine rewrites the parts that hold them,
 * and nothing is left masked on disk), waiting for the mutation to end.
 */
export async function removeExpiredRows(store: Store, table: string, where: string, values: Record<string, unknown>): Promise<void> {
  await store.command(physicalDeleteStatement(table, where, store.cluster), values, {
    name: 'retention.delete',
    settings: { mutations_sync: store.cluster ? '2' : '1' },
  });
}
