import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { badRequest } from '@weft/core';
import { addRoute, type Authenticator } from '@weft/http';
import {
  feedbackInWindow,
  filesStats,
  listAliases,
  listTags,
  parseRef,
  queryDatasetSources,
  resolveRefs,
  sourceDatasets,
  type FeedbackWindowRow,
} from '@weft/objects';
import { agentTotals, otelSpanBuckets, otelSpansIn, traceIdsOf, agentTraceSpans } from '@weft/query';
import type { Store } from '@weft/store';
import { agentConversationChat, agentConversationSpans, agentSearch, agentSpan, agentTraceChat } from './agents';

export interface Weave054ReadDeps {
  store: Store;
  auth: Authenticator;
}

/**
 * Weave 0.54's reads (libs/api weave054.ts): aliases and tags, dataset sources, feedback
 * analytics, files, projects info, V2 evaluation results and the agents view (agents.ts).
 */
export async function weave054ReadRoutes(app: FastifyInstance, deps: Weave054ReadDeps): Promise<void> {
  const { store, auth } = deps;
  addRoute(app, auth, 'aliasList', async (b) => ({ aliases: await listAliases(store, b.project_id) }));
  addRoute(app, auth, 'tagList', async (b) => ({ tags: await listTags(store, b.project_id) }));
  addRoute(app, auth, 'datasetSourcesQuery', async (b) => queryDatasetSources(store, b));
  addRoute(app, auth, 'sourceDatasetsQuery', async (b) => sourceDatasets(store, b));
  addRoute(app, auth, 'filesQueryStats', async (b) => filesStats(store, b.project_id));
  // weft serves file contents through /file/content (by digest): a file URI resolves to nothing it could hand out.
  addRoute(app, auth, 'filesResolveUrl', async (b) => ({ download_urls: b.uris.map(() => ''), expires_at: null }));
  // Projects are named `entity/project` throughout weft: the internal id is the name.
  addRoute(app, auth, 'projectsInfo', async (b) => b.project_ids.map((id) => ({ external_project_id: id, internal_project_id: id })));
  addRoute(app, auth, 'feedbackPayloadSchema', async (b, { signal }) => payloadSchema(store, b, signal));
  addRoute(app, auth, 'feedbackStats', async (b, { signal }) => feedbackStats(store, b, signal));
  addRoute(app, auth, 'feedbackAggregate', async (b, { signal }) => feedbackAggregate(store, b, signal));
  addRoute(app, auth, 'evalResultsQuery', async (b, { signal }) => evalResults(store, b, signal));

  addRoute(app, auth, 'agentsQuery', async (b, { signal }) => {
    const { rows, total } = await agentTotals(
      store,
      {
        projectId: b.project_id,
        agentName: b.filters?.agent_name,
        byVersion: false,
        order: orderOf(b.sort_by, AGENT_SORT),
        limit: b.limit,
        offset: b.offset,
      },
      signal,
    );
    return { agents: rows.map((r) => agentOut(b.project_id, r)), total_count: total };
  });
  addRoute(app, auth, 'agentVersionsQuery', async (b, { signal }) => {
    const { rows, total } = await agentTotals(
      store,
      {
        projectId: b.project_id,
        agentName: b.agent_name,
        byVersion: true,
        order: orderOf(b.sort_by, [...AGENT_SORT, 'agent_version']),
        limit: b.limit,
        offset: b.offset,
      },
      signal,
    );
    return { versions: rows.map((r) => ({ ...agentOut(b.project_id, r), agent_version: r.agent_version })), total_count: total };
  });
  addRoute(app, auth, 'agentTraceChat', async (b, { signal }) => agentTraceChat(store, b.project_id, b.trace_id, signal));
  addRoute(app, auth, 'agentConversationChat', async (b, { signal }) => agentConversationChat(store, b, signal));
  addRoute(app, auth, 'agentConversationSpans', async (b, { signal }) => agentConversationSpans(store, b, signal));
  addRoute(app, auth, 'agentsSearch', async (b, { signal }) => agentSearch(store, b, signal));
  addRoute(app, auth, 'agentSpansQuery', async (b, { signal }) => {
    const { rows, total } = await otelSpansIn(
      store,
      { projectId: b.project_id, after: b.started_after, before: b.started_before, limit: b.limit, offset: b.offset },
      signal,
    );
    return { spans: rows.map((r) => agentSpan(r)), groups: [], total_count: total };
  });
  addRoute(app, auth, 'agentSpansStats', async (b, { signal }) => {
    const { start, end, granularity } = window(b.start, b.end, b.granularity);
    const rows = await otelSpanBuckets(store, { projectId: b.project_id, start, end, granularity }, signal);
    const metrics = ['span_count', 'invocation_count', 'error_count', 'input_tokens', 'output_tokens'];
    return {
      bucket_type: 'time' as const,
      columns: [
        { name: 'timestamp', role: 'time' as const, value_type: 'datetime' as const },
        ...metrics.map((m) => ({
          name: m,
          role: 'metric' as const,
          value_type: 'number' as const,
          metric: m,
          aggregation: m.endsWith('count') ? 'count' : 'sum',
        })),
      ],
      rows: rows.map((r) => ({
        ...Object.fromEntries(metrics.map((m) => [m, Number(r[m as keyof typeof r])])),
        timestamp: isoOf(r.timestamp),
      })),
      start,
      end,
      granularity,
      timezone: b.timezone,
    };
  });
  addRoute(app, auth, 'agentSpansCustomAttrsSchema', async (b, { signal }) => {
    const { rows } = await otelSpansIn(
      store,
      { projectId: b.project_id, after: b.started_after, before: b.started_before, limit: 1000, offset: 0 },
      signal,
    );
    const counts = new Map<
      string,
      {
        source: 'custom_attrs_string' | 'custom_attrs_int' | 'custom_attrs_float' | 'custom_attrs_bool';
        value_type: 'string' | 'int' | 'float' | 'bool';
        n: number;
      }
    >();
    for (const r of rows) {
      const s = agentSpan(r);
      for (const [source, value_type] of [
        ['custom_attrs_string', 'string'],
        ['custom_attrs_int', 'int'],
        ['custom_attrs_float', 'float'],
        ['custom_attrs_bool', 'bool'],
      ] as const)
        for (const key of Object.keys(s[source] as Record<string, unknown>)) {
          const k = `${source}|${key}`;
          const c = counts.get(k) ?? { source, value_type, n: 0 };
          c.n++;
          counts.set(k, c);
        }
    }
    const all = [...counts].map(([k, c]) => ({
      key: k.split('|').slice(1).join('|'),
      source: c.source,
      value_type: c.value_type,
      span_count: c.n,
    }));
    all.sort((a, b2) => b2.span_count - a.span_count || a.key.localeCompare(b2.key));
    return {
      attributes: all.slice(b.offset, b.offset + b.limit),
      has_more: all.length > b.offset + b.limit,
      limit: b.limit,
      offset: b.offset,
    };
  });
}

const AGENT_SORT = [
  'agent_name',
  'invocation_count',
  'error_count',
  'span_count',
  'total_duration_ms',
  'total_input_tokens',
  'total_output_tokens',
  'first_seen',
  'last_seen',
];

function orderOf(sortBy: { field: string; direction: 'asc' | 'desc' }[] | null | undefined, allowed: string[]): string {
  const terms = (sortBy ?? []).map((s, i) => {
    if (!allowed.includes(s.field)) throw badRequest(`sort_by[${i}].field: one of ${allowed.join(', ')}`, `sort_by[${i}].field`);
    return `${s.field} ${s.direction === 'desc' ? 'DESC' : 'ASC'}`;
  });
  return [...terms, 'last_seen DESC', 'agent_name ASC'].join(', ');
}

const isoOf = (ch: string | null) => (ch === null ? null : `${ch.replace(' ', 'T').replace(/(\.\d+)?$/, (m) => m)}Z`);

function agentOut(projectId: string, r: Awaited<ReturnType<typeof agentTotals>>['rows'][number]) {
  return {
    project_id: projectId,
    agent_name: r.agent_name,
    span_count: Number(r.span_count),
    invocation_count: Number(r.invocation_count),
    error_count: Number(r.error_count),
    total_duration_ms: Number(r.total_duration_ms),
    total_input_tokens: Number(r.total_input_tokens),
    total_output_tokens: Number(r.total_output_tokens),
    total_cost_usd: null,
    first_seen: isoOf(r.first_seen),
    last_seen: isoOf(r.last_seen),
  };
}

/** A window [start, end) in ISO text and its bucket width: `granularity` seconds, else about 60 buckets (at least a minute). */
function window(start: string, end: string | null | undefined, granularity: number | null | undefined) {
  const s = Date.parse(start);
  const e = end ? Date.parse(end) : Date.now();
  if (Number.isNaN(s)) throw badRequest('start: not a date', 'start');
  if (Number.isNaN(e) || e <= s) throw badRequest('end: not a date after start', 'end');
  const g = granularity ?? Math.max(60, Math.ceil((e - s) / 1000 / 60 / 60) * 60);
  if ((e - s) / 1000 / g > 10_000) throw badRequest('granularity: more than 10000 buckets', 'granularity');
  return { start: new Date(s).toISOString(), end: new Date(e).toISOString(), startMs: s, endMs: e, granularity: g };
}

/** The feedback a payload-schema or stats request reads: its project's, in its window, of its type and trigger. */
function feedbackOfWindow(
  b: { project_id: string; feedback_type?: string | null; trigger_ref?: string | null },
  w: { startMs: number; endMs: number },
) {
  return {
    projectId: b.project_id,
    startMs: w.startMs,
    endMs: w.endMs,
    types: b.feedback_type ? [b.feedback_type] : undefined,
    triggerRef: b.trigger_ref,
  };
}

/** Every leaf of a JSON value with its dotted path. */
function leaves(v: unknown, path: string, out: [string, unknown][]): void {
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    for (const [k, x] of Object.entries(v)) leaves(x, path ? `${path}.${k}` : k, out);
  } else if (path) out.push([path, v]);
}

const payloadOf = (r: FeedbackWindowRow): unknown => {
  try {
    return JSON.parse(r.payload_dump);
  } catch {
    return null;
  }
};

function valueType(v: unknown): 'numeric' | 'boolean' | 'categorical' | null {
  if (typeof v === 'number') return 'numeric';
  if (typeof v === 'boolean') return 'boolean';
  if (typeof v === 'string') return 'categorical';
  return null;
}

async function payloadSchema(
  store: Store,
  b: {
    project_id: string;
    start: string;
    end?: string | null;
    feedback_type?: string | null;
    trigger_ref?: string | null;
    sample_limit: number;
  },
  signal: AbortSignal,
) {
  const w = window(b.start, b.end, 60 * 60 * 24);
  const rows = await feedbackInWindow(store, { ...feedbackOfWindow(b, w), limit: b.sample_limit }, signal);
  const types = new Map<string, 'numeric' | 'boolean' | 'categorical' | null>();
  for (const r of rows) {
    const out: [string, unknown][] = [];
    leaves(payloadOf(r), '', out);
    for (const [path, v] of out) {
      const t = valueType(v);
      if (!types.has(path) || (types.get(path) === null && t !== null)) types.set(path, t);
    }
  }
  return { paths: [...types].sort(([a], [c]) => a.localeCompare(c)).map(([json_path, value_type]) => ({ json_path, value_type })) };
}

/** A metric's key in a bucket: its JSON path with every non-alphanumeric run as `_`. */
const slug = (path: string) => path.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_|_$/g, '');

function aggregate(values: unknown[], aggs: string[], percentiles: number[], type: string): Record<string, number | null> {
  const nums = values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  const bools = values.filter((v): v is boolean => typeof v === 'boolean');
  const chosen = aggs.length
    ? aggs
    : type === 'boolean'
      ? ['count_true', 'count_false']
      : type === 'categorical'
        ? ['count']
        : ['avg', 'min', 'max'];
  const out: Record<string, number | null> = {};
  for (const a of chosen) {
    if (a === 'count') out[a] = values.filter((v) => v !== undefined && v !== null).length;
    else if (a === 'count_true') out[a] = bools.filter((x) => x).length;
    else if (a === 'count_false') out[a] = bools.filter((x) => !x).length;
    else if (a === 'sum') out[a] = nums.length ? nums.reduce((s, x) => s + x, 0) : null;
    else if (a === 'avg') out[a] = nums.length ? nums.reduce((s, x) => s + x, 0) / nums.length : null;
    else if (a === 'min') out[a] = nums.length ? Math.min(...nums) : null;
    else if (a === 'max') out[a] = nums.length ? Math.max(...nums) : null;
  }
  if (type === 'numeric') {
    const sorted = [...nums].sort((x, y) => x - y);
    for (const p of percentiles)
      out[`p${p}`] = sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! : null;
  }
  return out;
}

const valueAt = (payload: unknown, path: string): unknown => {
  let v: unknown = payload;
  for (const k of path.split('.')) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[k];
  }
  return v;
};

async function feedbackStats(
  store: Store,
  b: {
    project_id: string;
    start: string;
    end?: string | null;
    feedback_type?: string | null;
    trigger_ref?: string | null;
    granularity?: number | null;
    timezone: string;
    metrics: { json_path: string; aggregations: string[]; percentiles: number[]; value_type: string }[];
  },
  signal: AbortSignal,
) {
  const w = window(b.start, b.end, b.granularity);
  const rows = await feedbackInWindow(store, feedbackOfWindow(b, w), signal);
  const width = w.granularity * 1000;
  const byBucket = new Map<number, unknown[]>();
  const payloads = rows.map((r) => ({ at: Date.parse(`${r.created_at.replace(' ', 'T')}Z`), payload: payloadOf(r) }));
  for (const x of payloads) {
    const k = w.startMs + Math.floor((x.at - w.startMs) / width) * width;
    byBucket.set(k, [...(byBucket.get(k) ?? []), x.payload]);
  }
  const buckets: Record<string, unknown>[] = [];
  for (let t = w.startMs; t < w.endMs; t += width) {
    const ps = byBucket.get(t) ?? [];
    const bucket: Record<string, unknown> = { timestamp: new Date(t).toISOString(), count: ps.length };
    for (const m of b.metrics)
      for (const [agg, v] of Object.entries(
        aggregate(
          ps.map((p) => valueAt(p, m.json_path)),
          m.aggregations,
          m.percentiles,
          m.value_type,
        ),
      ))
        bucket[`${agg}__${slug(m.json_path)}`] = v;
    buckets.push(bucket);
  }
  const window_stats: Record<string, Record<string, number | null>> = {};
  for (const m of b.metrics)
    window_stats[slug(m.json_path)] = aggregate(
      payloads.map((p) => valueAt(p.payload, m.json_path)),
      m.aggregations,
      m.percentiles,
      m.value_type,
    );
  return { start: w.start, end: w.end, granularity: w.granularity, timezone: b.timezone, buckets, window_stats };
}

/**
 * /feedback/aggregate: counts of feedback per group and time bucket. A feedback's ratings are the
 * numbers of its payload's `scorer_ratings` (else `ratings`), its tags `scorer_tags` (else
 * `tags`): the agent-monitor and user-feedback payloads of Weave 0.54. `scorer_id` is the scorer
 * (runnable_ref) object's name; the span_* groups are of the span the feedback is on.
 */
async function feedbackAggregate(
  store: Store,
  b: {
    project_id: string;
    after_ms: number;
    before_ms: number;
    feedback_types: string[];
    group_by: string[];
    monitor_ids: string[];
    scorer_ids: string[];
    tags: string[];
    rating_min?: number | null;
    rating_max?: number | null;
    time_bucket_seconds?: number | null;
  },
  signal: AbortSignal,
) {
  if (b.before_ms <= b.after_ms) throw badRequest('before_ms: must be after after_ms', 'before_ms');
  const rows = await feedbackInWindow(
    store,
    { projectId: b.project_id, startMs: b.after_ms, endMs: b.before_ms, types: b.feedback_types },
    signal,
  );
  const width = b.time_bucket_seconds ? b.time_bucket_seconds * 1000 : null;
  const out = new Map<string, ReturnType<typeof emptyBucket>>();
  for (const r of rows) {
    const scorer = r.runnable_ref ? refName(r.runnable_ref) : '';
    const monitor = r.trigger_ref ? refName(r.trigger_ref) : '';
    if (b.scorer_ids.length && !b.scorer_ids.includes(scorer)) continue;
    if (b.monitor_ids.length && !b.monitor_ids.includes(monitor)) continue;
    const payload = payloadOf(r) as Record<string, unknown> | null;
    const ratingsObj = (payload?.scorer_ratings ?? payload?.ratings ?? {}) as Record<string, unknown>;
    const ratings = Object.entries(typeof ratingsObj === 'object' && ratingsObj ? ratingsObj : {}).filter(
      (e): e is [string, number] => typeof e[1] === 'number',
    );
    const tagList = (Array.isArray(payload?.scorer_tags) ? payload.scorer_tags : Array.isArray(payload?.tags) ? payload.tags : []).filter(
      (t): t is string => typeof t === 'string',
    );
    if (b.tags.length && !tagList.some((t) => b.tags.includes(t))) continue;
    if (b.rating_min != null && !ratings.some(([, v]) => v >= b.rating_min!)) continue;
    if (b.rating_max != null && !ratings.some(([, v]) => v <= b.rating_max!)) continue;
    const group: Record<string, string> = {};
    for (const g of b.group_by) group[g] = g === 'scorer_id' ? scorer : '';
    const at = Date.parse(`${r.created_at.replace(' ', 'T')}Z`);
    const start = width ? b.after_ms + Math.floor((at - b.after_ms) / width) * width : null;
    const key = JSON.stringify([group, start]);
    const bucket = out.get(key) ?? emptyBucket(group, start);
    bucket.total_count++;
    if (ratings.length || tagList.length) bucket.scored_count++;
    for (const [name, v] of ratings) {
      bucket.rating_counts[name] = (bucket.rating_counts[name] ?? 0) + 1;
      bucket.rating_sums[name] = (bucket.rating_sums[name] ?? 0) + v;
    }
    for (const t of tagList) bucket.tag_counts[t] = (bucket.tag_counts[t] ?? 0) + 1;
    out.set(key, bucket);
  }
  const buckets = [...out.values()].sort(
    (x, y) =>
      (x.time_bucket_start_ms ?? 0) - (y.time_bucket_start_ms ?? 0) || JSON.stringify(x.group).localeCompare(JSON.stringify(y.group)),
  );
  return { after_ms: b.after_ms, before_ms: b.before_ms, time_bucket_seconds: b.time_bucket_seconds ?? null, buckets };
}

/** An object ref's object name (else the ref as given). */
function refName(ref: string): string {
  const r = parseRef(ref);
  return r && (r.kind === 'object' || r.kind === 'op') ? r.name : ref;
}

function emptyBucket(group: Record<string, string>, start: number | null) {
  return {
    group,
    time_bucket_start_ms: start,
    total_count: 0,
    scored_count: 0,
    rating_counts: {} as Record<string, number>,
    rating_sums: {} as Record<string, number>,
    tag_counts: {} as Record<string, number>,
  };
}

/**
 * V2 eval_results/query (the reference's eval_results_query, simplified): for the evaluation
 * calls named, each example (dataset row) with every evaluation's trials — its predict_and_score
 * calls' model output and scores. Rows keyed by the example's row digest (from its row ref,
 * else a digest of the example), in first-seen order.
 */
async function evalResults(
  store: Store,
  b: {
    entity: string;
    project: string;
    evaluation_call_ids?: string[] | null;
    evaluation_run_ids?: string[] | null;
    include_rows: boolean;
    include_summary: boolean;
    include_raw_data_rows: boolean;
    require_intersection: boolean;
    limit?: number | null;
    offset?: number | null;
  },
  signal: AbortSignal,
) {
  const projectId = `${b.entity}/${b.project}`;
  const evalIds = [...new Set([...(b.evaluation_call_ids ?? []), ...(b.evaluation_run_ids ?? [])])];
  if (evalIds.length === 0)
    return { rows: [], total_rows: 0, summary: b.include_summary ? { evaluations: [], row_count: 0 } : null, warnings: [] };
  const spans = await agentTraceSpans(store, projectId, await traceIdsOf(store, projectId, evalIds, signal), signal);
  const parse = (s: string | null): unknown => {
    try {
      return s ? (JSON.parse(s) as unknown) : null;
    } catch {
      return null;
    }
  };
  const rows = new Map<string, { row_digest: string; example: unknown; evaluations: Map<string, Record<string, unknown>[]> }>();
  const summaries = new Map<string, { trials: number; scores: Map<string, unknown[]> }>();
  for (const id of evalIds) summaries.set(id, { trials: 0, scores: new Map() });
  for (const s of spans) {
    if (!s.parent_id || !evalIds.includes(s.parent_id) || !s.op_name.includes('predict_and_score')) continue;
    const inputs = (parse(s.inputs_dump) ?? {}) as Record<string, unknown>;
    const output = (parse(s.output_dump) ?? {}) as Record<string, unknown>;
    const example = inputs.example;
    const rowRef = typeof example === 'string' ? /\/attr\/rows\/id\/([^/]+)/.exec(example)?.[1] : undefined;
    const digest =
      rowRef ??
      createHash('sha256')
        .update(JSON.stringify(example ?? null))
        .digest('hex');
    const row = rows.get(digest) ?? { row_digest: digest, example, evaluations: new Map() };
    const scores = (output.scores ?? {}) as Record<string, unknown>;
    const trial = {
      predict_and_score_call_id: s.id,
      predict_call_id: spans.find((c) => c.parent_id === s.id && !c.op_name.includes('score'))?.id ?? null,
      model_output: output.output ?? output.model_output ?? null,
      scores,
      scorer_call_ids: {},
      model_latency_seconds: typeof output.model_latency === 'number' ? output.model_latency : null,
      total_tokens: s.input_tokens + s.output_tokens || null,
      total_cost: null,
    };
    row.evaluations.set(s.parent_id, [...(row.evaluations.get(s.parent_id) ?? []), trial]);
    rows.set(digest, row);
    const sum = summaries.get(s.parent_id)!;
    sum.trials++;
    for (const [k, v] of Object.entries(scores)) sum.scores.set(k, [...(sum.scores.get(k) ?? []), v]);
  }
  let all = [...rows.values()];
  if (b.require_intersection) all = all.filter((r) => evalIds.every((id) => r.evaluations.has(id)));
  const examples = b.include_raw_data_rows
    ? await resolveRefs(
        store,
        all.map((r) => (typeof r.example === 'string' && parseRef(r.example)?.projectId === projectId ? r.example : '')),
        JSON.parse,
      )
    : [];
  const page = all.slice(b.offset ?? 0, b.limit ? (b.offset ?? 0) + b.limit : undefined);
  const start = b.offset ?? 0;
  return {
    rows: b.include_rows
      ? page.map((r, i) => {
          const resolved = examples[start + i];
          return {
            row_digest: r.row_digest,
            raw_data_row: b.include_raw_data_rows ? (resolved?.status === 'ok' ? resolved.value : r.example) : null,
            evaluations: [...r.evaluations].map(([evaluation_call_id, trials]) => ({ evaluation_call_id, trials })),
          };
        })
      : [],
    total_rows: all.length,
    summary: b.include_summary
      ? {
          row_count: all.length,
          evaluations: evalIds.map((id) => {
            const e = spans.find((s) => s.id === id);
            const sum = summaries.get(id)!;
            return {
              evaluation_call_id: id,
              display_name: e?.op_name ?? null,
              trace_id: e?.trace_id ?? null,
              started_at: e ? isoOf(e.started_at) : null,
              trial_count: sum.trials,
              scorer_stats: [...sum.scores].map(([scorer_key, vals]) => {
                const nums = vals.filter((v): v is number => typeof v === 'number');
                const bools = vals.filter((v): v is boolean => typeof v === 'boolean');
                return {
                  scorer_key,
                  path: null,
                  trial_count: vals.length,
                  value_type: bools.length ? 'binary' : nums.length ? 'continuous' : 'text',
                  numeric_count: nums.length,
                  numeric_mean: nums.length ? nums.reduce((s, x) => s + x, 0) / nums.length : null,
                  pass_known_count: bools.length,
                  pass_true_count: bools.filter((x) => x).length,
                  pass_rate: bools.length ? bools.filter((x) => x).length / bools.length : null,
                  pass_signal_coverage: vals.length ? bools.length / vals.length : null,
                };
              }),
            };
          }),
        }
      : null,
    warnings: [],
  };
}
