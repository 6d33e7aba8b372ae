import type { Params } from './params';

/**
 * Which rows retention removes: per project, those older than its cutoff (now less its
 * retention days); a default cutoff for the projects that set none. Each table is judged by
 * the time it has: a call by its start, its end row by its end (a call that started before the
 * cutoff and ended after it loses its end row on a later pass: it is invisible meanwhile, reads
 * start from calls_starts), renames and deletion marks by when they were written, feedback by
 * when it was written or by its call.
 */
export interface RetentionCutoffs {
  /** Projects with their own retention (cutoffs in µs since the epoch). */
  projects: { projectId: string; cutoffUs: number }[];
  /** Projects that chose to keep everything (no default applies to them). */
  keepForever: string[];
  /** For every other project (absent: keep everything). */
  defaultCutoffUs?: number;
}

/**
 * The tables that hold a project's calls and their feedback, in the order a pass removes from
 * them, each with the condition of its expired rows. Feedback goes first: what hangs on an
 * expired call goes with it (found through calls_starts, so before those rows go), and any
 * feedback written before the cutoff.
 */
export const RETENTION_TABLES: readonly { table: string; expired: (c: RetentionCutoffs, p: Params) => string | null }[] = [
  {
    table: 'feedback',
    expired: (c, p) => {
      const written = expiredRowsSql(c, 'created_at', p);
      const calls = expiredRowsSql(c, 'started_at', p);
      return written && calls
        ? `(${written}) OR svc_ref IN (SELECT concat('weave:///', project_id, '/call/', id) FROM calls_starts WHERE ${calls})`
        : null;
    },
  },
  { table: 'calls_starts', expired: (c, p) => expiredRowsSql(c, 'started_at', p) },
  { table: 'calls_ends', expired: (c, p) => expiredRowsSql(c, 'ended_at', p) },
  { table: 'calls_renames', expired: (c, p) => expiredRowsSql(c, 'renamed_at', p) },
  { table: 'calls_deleted', expired: (c, p) => expiredRowsSql(c, 'deleted_at', p) },
];

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
