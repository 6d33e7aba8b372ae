import type { FastifyInstance } from 'fastify';
import { addRoute, type Authenticator } from '@weft/http';
import type {
  AnalyticsBatchReq,
  AnalyticsBatchRes,
  AnalyticsQueryReq,
  AnalyticsQueryRes,
  CallsAggregateReq,
  CallsAggregateRes,
  ProjectsListReq,
  ProjectSummary,
} from '@weft/api';
import { ApiError, metrics, roundFigure, type Caller } from '@weft/core';
import { projectsByActivity } from '@weft/objects';
import {
  answerFrom,
  CallsAggregatePlan,
  checkBatchQuery,
  chooseBucketSeconds,
  type FactsKeeper,
  MetricsQueryPlan,
  planBatch,
} from '@weft/query';
import type { Store } from '@weft/store';

export interface AnalyticsRouteDeps {
  store: Store;
  auth: Authenticator;
  /** Analytics facts: which days /analytics/query may read from them (none: the call tables). */
  facts?: FactsKeeper;
}

/** The web UI's overview and dashboards: the projects list, aggregates, metrics queries (one or a dashboard's batch). */
export async function analyticsRoutes(app: FastifyInstance, deps: AnalyticsRouteDeps): Promise<void> {
  const { store, auth, facts } = deps;
  addRoute(app, auth, 'projectsList', async (body, { caller }) => listProjects(store, caller, body));
  addRoute(app, auth, 'callsAggregate', async (body, { signal }) => aggregateCalls(store, body, signal));
  addRoute(app, auth, 'analyticsQuery', async (body, { signal }) => queryMetrics(store, body, signal, facts));
  addRoute(app, auth, 'analyticsBatch', async (body, { signal }) => queryMetricsBatch(store, body, signal, facts));
}

const DEFAULT_PROJECTS_LIMIT = 1000;

/**
 * /projects/list: the projects of the entities the caller may use (all, for an admin), with
 * their call and object-version counts and last activity, most recently active first. A project
 * exists once something was written to it (calls or objects).
 */
async function listProjects(store: Store, caller: Caller, req: ProjectsListReq): Promise<{ projects: ProjectSummary[] }> {
  let prefixes: string[] | null = null;
  if (req.entity !== undefined) {
    // The edge's tenancy check already refused an entity the caller may not use.
    prefixes = [`${req.entity}/`];
  } else if (!caller.isAdmin) {
    if (caller.entities.length === 0) return { projects: [] };
    prefixes = caller.entities.map((e) => `${e}/`);
  }
  const rows = await projectsByActivity(store, prefixes, req.limit || DEFAULT_PROJECTS_LIMIT);
  return {
    projects: rows.map((r) => ({
      project_id: r.project_id,
      call_count: Number(r.call_count),
      object_count: Number(r.object_count),
      last_activity: Number(r.last_us) > 0 ? new Date(Number(r.last_us) / 1000).toISOString() : null,
    })),
  };
}

type Figures = { calls: number | string; errors: number | string; p50_latency_ms: number | null; p99_latency_ms: number | null };
const figures = (r: Figures) => ({
  calls: Number(r.calls),
  errors: Number(r.errors),
  p50_latency_ms: r.p50_latency_ms === null ? null : Number(r.p50_latency_ms),
  p99_latency_ms: r.p99_latency_ms === null ? null : Number(r.p99_latency_ms),
});
const usageTotals = () => ({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cost: 0 });

/**
 * /calls/aggregate: for the calls a filter/query matches (the same set /calls/query_stats
 * counts), calls/errors/latency per time bucket and per op, tokens and cost per op and per model.
 */
async function aggregateCalls(store: Store, req: CallsAggregateReq, signal: AbortSignal): Promise<CallsAggregateRes> {
  const plan = new CallsAggregatePlan(req);
  const run = async <T>(q: { sql: string; params: Record<string, unknown> }): Promise<T[]> => {
    return store.rows<T>(q.sql, q.params, { name: 'analytics.aggregateCalls', signal });
  };
  const [range] = await run<{ min_us: string; max_us: string; calls: string }>(plan.rangeQuery());
  const bucket = req.bucket_seconds ?? chooseBucketSeconds(Number(range?.min_us ?? 0), Number(range?.max_us ?? 0));
  if (Number(range?.calls ?? 0) > 0 && req.bucket_seconds !== undefined) {
    const buckets = (Number(range!.max_us) - Number(range!.min_us)) / 1e6 / bucket;
    if (buckets > 10_000)
      throw new ApiError(400, `bucket_seconds: ${bucket} s gives ${Math.ceil(buckets)} buckets over the calls matched (at most 10000)`, {
        field: 'bucket_seconds',
      });
  }
  const rows = await run<Figures & { kind: 'bucket' | 'op' | 'total'; t: string | number; op_name: string | null }>(
    plan.figuresQuery(bucket),
  );
  const series = rows.filter((r) => r.kind === 'bucket');
  const ops = rows.filter((r) => r.kind !== 'bucket').map((r) => ({ ...r, is_total: r.kind === 'total' }));
  const usage = await run<{
    op_name: string | null;
    model: string;
    calls: string;
    requests: string;
    prompt_tokens: string;
    completion_tokens: string;
    total_tokens: string;
    cost: number;
  }>(plan.usageQuery());

  const totalRow = ops.find((o) => Boolean(o.is_total));
  const totals = {
    ...(totalRow ? figures(totalRow) : { calls: 0, errors: 0, p50_latency_ms: null, p99_latency_ms: null }),
    ...usageTotals(),
  };
  const byOp = new Map<string, CallsAggregateRes['by_op'][number]>();
  for (const o of ops) if (!o.is_total) byOp.set(o.op_name ?? '', { op_name: o.op_name ?? '', ...figures(o), ...usageTotals() });
  const byModel = new Map<string, CallsAggregateRes['by_model'][number]>();
  for (const u of usage) {
    const add = (t: { prompt_tokens: number; completion_tokens: number; total_tokens: number; cost: number }) => {
      t.prompt_tokens += Number(u.prompt_tokens);
      t.completion_tokens += Number(u.completion_tokens);
      t.total_tokens += Number(u.total_tokens);
      t.cost += Number(u.cost);
    };
    add(totals);
    const op = byOp.get(u.op_name ?? '');
    if (op) add(op);
    let m = byModel.get(u.model);
    if (!m) byModel.set(u.model, (m = { model: u.model, calls: 0, requests: 0, ...usageTotals() }));
    // A call uses a model in one op only: per-op call counts add up to the model's.
    m.calls += Number(u.calls);
    m.requests += Number(u.requests);
    add(m);
  }
  // Costs are sums of floats: rounded at the edge (roundFigure).
  for (const t of [totals, ...byOp.values(), ...byModel.values()]) t.cost = roundFigure(t.cost);
  return {
    bucket_seconds: bucket,
    totals,
    series: series.map((s) => ({ start: new Date(Number(s.t) * 1000).toISOString(), ...figures(s) })),
    by_op: [...byOp.values()],
    by_model: [...byModel.values()].sort((a, b) => b.cost - a.cost || b.total_tokens - a.total_tokens || a.model.localeCompare(b.model)),
  };
}

/**
 * /analytics/query: the request's metrics per group of its dimensions over the calls it matches
 * (libs/query analytics/planner.ts, over the catalogue of @weft/analytics); at most `limit` groups, `truncated` when more matched.
 */
async function queryMetrics(store: Store, req: AnalyticsQueryReq, signal: AbortSignal, facts?: FactsKeeper): Promise<AnalyticsQueryRes> {
  const run = async (q: { sql: string; params: Record<string, unknown> }) => {
    return store.rows<Record<string, unknown>>(q.sql, q.params, { name: 'analytics.queryMetrics', signal });
  };
  // Days with current analytics facts are read from them (libs/query analytics/facts.ts), the rest from the calls.
  const coverage = facts ? await facts.coverage(req.project_id, signal) : undefined;
  let bucketSeconds = req.bucket_seconds;
  if (req.bucket === 'auto') {
    const [range] = await run(MetricsQueryPlan.rangeQuery(req, coverage));
    bucketSeconds = chooseBucketSeconds(Number(range?.min_us ?? 0), Number(range?.max_us ?? 0));
    req = { ...req, bucket: undefined, bucket_seconds: bucketSeconds };
  }
  const plan = new MetricsQueryPlan(req, coverage);
  metrics.analyticsQueries.inc({ source: plan.readsFacts ? (plan.readsPatchedFacts ? 'patched' : 'facts') : 'calls' });
  let answer = plan.rows(await run(plan.query()));
  if (req.totals && !answer.totals) {
    const totals = new MetricsQueryPlan(plan.totalsRequest(), coverage);
    answer = { ...answer, totals: totals.rows(await run(totals.query())).totals };
  }
  return bucketSeconds !== undefined && req.dimensions.includes('time') ? { ...answer, bucket_seconds: bucketSeconds } : answer;
}

/**
 * /analytics/batch: each query's answer as /analytics/query gives it alone, or its error; the
 * queries over the same calls and groups run as one (libs/query analytics/batch.ts), one after
 * another (the engine runs a project's heavy statements in turn anyway).
 */
async function queryMetricsBatch(
  store: Store,
  req: AnalyticsBatchReq,
  signal: AbortSignal,
  facts?: FactsKeeper,
): Promise<AnalyticsBatchRes> {
  const answers: AnalyticsBatchRes['answers'] = [];
  const refused = (i: number, e: unknown) => {
    if (!(e instanceof ApiError)) throw e;
    answers[i] = { error: { status: e.status, reason: e.reason, ...(e.field !== undefined ? { field: e.field } : {}) } };
  };
  const queries = req.queries.map((body, i): AnalyticsQueryReq | undefined => {
    try {
      return checkBatchQuery(req.project_id, body);
    } catch (e) {
      refused(i, e);
      return undefined;
    }
  });
  const alone = async (i: number) => {
    try {
      answers[i] = await queryMetrics(store, queries[i]!, signal, facts);
    } catch (e) {
      refused(i, e);
    }
  };
  for (const group of planBatch(queries)) {
    if (group.members.length === 1 && group.request === queries[group.members[0]!]) {
      await alone(group.members[0]!);
      continue;
    }
    let answer: AnalyticsQueryRes | undefined;
    try {
      answer = await queryMetrics(store, group.request, signal, facts);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
    }
    for (const i of group.members) {
      const own = answer && answerFrom(queries[i]!, answer, group.request);
      if (own) answers[i] = own;
      else await alone(i);
    }
  }
  return { answers };
}
