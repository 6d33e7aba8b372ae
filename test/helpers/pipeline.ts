import { randomUUID } from 'node:crypto';
import { Client, type Reply } from './client';
import { newDataDir, startWeft, type RunningWeft } from './server';

/**
 * The distributed topology the Kafka tests run, as separate processes on one broker:
 *   gateway  = services/gateway main (WEFT_BUS=kafka; its own embedded store, unused for calls)
 *   writer   = all-in-one main with WEFT_ROLES=writer,query: consumes Kafka into its embedded
 *              store and serves the queries on that same store (chDB: one data dir per process).
 * Each pipeline gets its own topic prefix and consumer group, so tests sharing a broker do not meet.
 */
export interface Pipeline {
  env: Record<string, string>;
  prefix: string;
  startGateway(extra?: Record<string, string>, onLog?: (record: unknown) => void): Promise<RunningWeft>;
  startWriter(opts?: { dataDir?: string; env?: Record<string, string> }): Promise<RunningWeft>;
}

export function pipeline(brokers: string, label: string, extra: Record<string, string> = {}): Pipeline {
  const prefix = `t-${label}-${randomUUID().slice(0, 8)}.`;
  const env = {
    WEFT_BUS: 'kafka',
    KAFKA_BROKERS: brokers,
    KAFKA_TOPIC_PREFIX: prefix,
    KAFKA_GROUP_ID: `${prefix}writers`,
    KAFKA_TOPIC_PARTITIONS: '4',
    KAFKA_FETCH_MAX_WAIT_MS: '50',
    // The broker's minimum: a killed writer's partitions move on quickly.
    KAFKA_SESSION_TIMEOUT_MS: '6000',
    ...extra,
  };
  return {
    env,
    prefix,
    startGateway: (more = {}, onLog) =>
      startWeft({
        entry: 'services/gateway/src/main.ts',
        dataDir: newDataDir(`${label}-gw`),
        env: { ...env, ...more },
        ...(onLog ? { onLog } : {}),
      }),
    startWriter: (opts = {}) =>
      startWeft({ dataDir: opts.dataDir ?? newDataDir(`${label}-writer`), env: { ...env, WEFT_ROLES: 'writer,query', ...opts.env } }),
  };
}

/** A start and an end part for each id, as one /call/upsert_batch body. */
export function upsertBatch(project: string, ids: string[]): unknown {
  return {
    batch: ids.flatMap((id) => [
      {
        mode: 'start',
        req: {
          start: {
            project_id: project,
            id,
            trace_id: id,
            op_name: 'pipeline.op',
            started_at: '2026-01-01T00:00:00Z',
            inputs: { id },
            attributes: {},
          },
        },
      },
      { mode: 'end', req: { end: { project_id: project, id, ended_at: '2026-01-01T00:00:01Z', output: { ok: id }, summary: {} } } },
    ]),
  };
}

/** How postCallsUntilStopped posts: loops, calls per post, the pause after a 503, and who sees each answer. */
export interface CallLoadOptions {
  workers?: number;
  callsPerPost?: number;
  pauseAfter503Ms?: number;
  onAnswer?: (r: Reply) => void;
}

/**
 * Posts batches of calls from `workers` loops until stopped, as a client under load would: a 503
 * is waited out (`pauseAfter503Ms`) and retried with new ids; anything else but 200 fails.
 * Records the ids acknowledged and a count per status.
 */
export function postCallsUntilStopped(api: Client, project: string, tag: string, opts: CallLoadOptions = {}) {
  const { workers = 2, callsPerPost = 20, pauseAfter503Ms = 200, onAnswer } = opts;
  const acked: string[] = [];
  const statuses = new Map<number, number>();
  let n = 0;
  let stopped = false;
  const loop = async () => {
    while (!stopped) {
      const ids = Array.from({ length: callsPerPost }, (_, i) => `${tag}-${n}-${i}`);
      n++;
      const r = await api.post('/call/upsert_batch', upsertBatch(project, ids));
      onAnswer?.(r);
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      if (r.status === 200) acked.push(...ids);
      else if (r.status !== 503) throw new Error(`unexpected ${r.status}: ${r.text}`);
      else await new Promise((resolve) => setTimeout(resolve, pauseAfter503Ms));
    }
  };
  const loops = Array.from({ length: workers }, loop);
  return {
    acked,
    statuses,
    stop: async () => {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

/** The ids a query service returns for a project (every call, complete or not). */
export async function queriedIds(url: string, project: string): Promise<string[]> {
  const rows = await new Client(url).jsonl<{ id: string }>('/calls/stream_query', { project_id: project, columns: ['id'] });
  return rows.map((r) => r.id);
}

/** Polls until `check` returns true (or fails the test after `ms`). */
export async function eventually(check: () => Promise<boolean>, ms = 30_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Partitions the writer process was assigned in its last consumer-group join (from its logs). */
export function assignedPartitions(w: RunningWeft): number | null {
  const joins = w.logs.filter((l) => (l as { msg?: string }).msg === 'writer joined the consumer group') as { partitions: number }[];
  return joins.length ? joins[joins.length - 1]!.partitions : null;
}

export { metricValue } from '@weft/harness';
