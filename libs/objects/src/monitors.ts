import { type CallsQueryPlan, Params } from '@weft/query';
import type { Store } from '@weft/store';
import { refsWithTriggeredFeedbackSql } from './feedback';

/**
 * Every statement of the server's Monitors (services/inference monitors.ts, monitor-leases.ts):
 * the calls a monitor has yet to score — over the calls its plan matches, less those with its
 * feedback (feedback.ts) — and its lease (monitor_leases, migration 161), which says which
 * process scores it.
 */

/** Which calls a monitor scores: those its plan matches, ended since `sinceUs`, in its sample, without its feedback. */
export interface MonitorCallsPick {
  /** The monitor's op names and query over its project. */
  plan: CallsQueryPlan;
  projectId: string;
  /** The monitor's name: its sample's seed, and its feedback's object ref. */
  monitor: string;
  sinceUs: number;
  /** The share of calls (or groups) sampled, 0–1. */
  rate: number;
  limit: number;
}

/** Ended calls of the monitor's ops and query, in its sample, with none of its feedback yet: the oldest first. */
export async function monitorCallsToScore(
  store: Store,
  pick: MonitorCallsPick,
): Promise<{ id: string; inputs_dump: string | null; output_dump: string | null; ended_us: string }[]> {
  const { plan } = pick;
  const p = plan.params;
  const pid = plan.projectParam;
  const sql = `SELECT id, inputs_dump, output_dump, toUnixTimestamp64Micro(ended_at) AS ended_us
      FROM (${plan.matchedCallsSql(p, ['inputs_dump', 'output_dump', 'ended_at'])})
      WHERE ended_at IS NOT NULL AND ended_at >= fromUnixTimestamp64Micro(${p.add(pick.sinceUs, 'Int64')}, 'UTC')
        AND cityHash64(id, ${p.str(pick.monitor)}) % 1000000 < ${p.add(Math.round(pick.rate * 1_000_000), 'UInt64')}
        AND concat('weave:///', ${pid}, '/call/', id) NOT IN (
          ${refsWithTriggeredFeedbackSql(pid, p.str(`weave:///${pick.projectId}/object/${pick.monitor}:`))})
      ORDER BY ended_at LIMIT ${p.int(pick.limit)}`;
  return store.rows<{ id: string; inputs_dump: string | null; output_dump: string | null; ended_us: string }>(sql, p.values, {
    name: 'monitors.calls',
  });
}

/**
 * Debounced: the monitor's calls grouped by `field` (a call without one is its own group), a
 * group due once none of its calls ended for `quietMs`, sampled by group, without the monitor's
 * feedback on its last call: each group's last call (inputs, output, end) and, with
 * `allMessages`, the ids of its calls, oldest first.
 */
export async function monitorGroupsToScore(
  store: Store,
  pick: MonitorCallsPick & { field: 'trace_id' | 'thread_id'; allMessages: boolean; quietMs: number },
): Promise<{ id: string; ended_us: string; inputs_dump: string | null; output_dump: string | null; window_ids: string[] }[]> {
  const { plan, field } = pick;
  const p = plan.params;
  const pid = plan.projectParam;
  const sql = `SELECT last_id AS id, toUnixTimestamp64Micro(last_end) AS ended_us, inputs_dump, output_dump, window_ids FROM (
        SELECT ifNull(${field}, id) AS grp, argMax(id, ended_at) AS last_id, max(ended_at) AS last_end,
          argMax(inputs_dump, ended_at) AS inputs_dump, argMax(output_dump, ended_at) AS output_dump,
          ${pick.allMessages ? 'arrayMap(x -> x.2, arraySort(groupArray((ended_at, id))))' : "CAST([], 'Array(String)')"} AS window_ids
        FROM (${plan.matchedCallsSql(p, ['inputs_dump', 'output_dump', 'ended_at', field])})
        WHERE ended_at IS NOT NULL AND ended_at >= fromUnixTimestamp64Micro(${p.add(pick.sinceUs, 'Int64')}, 'UTC')
        GROUP BY grp
        HAVING last_end <= now64(6) - toIntervalMillisecond(${p.add(pick.quietMs, 'UInt64')})
          AND cityHash64(grp, ${p.str(pick.monitor)}) % 1000000 < ${p.add(Math.round(pick.rate * 1_000_000), 'UInt64')})
      WHERE concat('weave:///', ${pid}, '/call/', last_id) NOT IN (
        ${refsWithTriggeredFeedbackSql(pid, p.str(`weave:///${pick.projectId}/object/${pick.monitor}:`))})
      ORDER BY last_end LIMIT ${p.int(pick.limit)}`;
  return store.rows<{ id: string; ended_us: string; inputs_dump: string | null; output_dump: string | null; window_ids: string[] }>(
    sql,
    p.values,
    { name: 'monitors.threads' },
  );
}

/** Who holds a monitor's lease, and whether its heartbeat is younger than `staleAfterMs` (null: nobody ever did). */
export async function readMonitorLease(
  store: Store,
  projectId: string,
  monitor: string,
  staleAfterMs: number,
): Promise<{ owner: string; fresh: boolean } | null> {
  const p = new Params();
  const row = await store.row<{ owner: string; fresh: number }>(
    `SELECT owner, heartbeat_at >= now64(6) - toIntervalMillisecond(${p.add(staleAfterMs, 'UInt32')}) AS fresh
        FROM monitor_leases FINAL WHERE project_id = ${p.str(projectId)} AND monitor = ${p.str(monitor)}`,
    p.values,
    { name: 'monitor_leases.read' },
  );
  return row ? { owner: row.owner, fresh: Number(row.fresh) === 1 } : null;
}

/** Claims or renews a monitor's lease for `owner`, its heartbeat at `heartbeatAt` (ISO). */
export async function writeMonitorLease(
  store: Store,
  projectId: string,
  monitor: string,
  owner: string,
  heartbeatAt: string,
): Promise<void> {
  await store.insertRows('monitor_leases', [{ project_id: projectId, monitor, owner, heartbeat_at: heartbeatAt }], {
    name: 'monitor_leases.write',
  });
}
