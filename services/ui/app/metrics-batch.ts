import type { AnalyticsBatchRes } from '@weft/api';
import { ApiError, post } from './api';
import type { MetricsAnswer, MetricsQueryBody as Body } from './dashboard';

/**
 * A dashboard's /analytics/query bodies, asked for together: the bodies asked for in the same turn
 * (every chart's, and the totals') go out as one /analytics/batch request. The server reads the
 * queries over the same calls in one scan and folds their `top` itself; each body gets its own
 * answer, or its own error (a chart's bad metric is that chart's alone).
 */

type Totals = Record<string, number | null>;

interface Waiting {
  body: Body;
  resolve: (a: MetricsAnswer) => void;
  reject: (e: unknown) => void;
}

let pending: Waiting[] = [];

/** The answer to one /analytics/query body, sent with the other bodies asked for in this turn. */
export function queryMetrics(body: Body, signal?: AbortSignal): Promise<MetricsAnswer> {
  return new Promise<MetricsAnswer>((resolve, reject) => {
    signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
    if (pending.length === 0) setTimeout(flush, 0);
    pending.push({ body, resolve, reject });
  });
}

/**
 * Each of `body`'s metrics over every call it matches (no dimension): the server reads them as the
 * `totals` of a chart's query over the same calls asked for in this turn.
 */
export async function queryTotals(body: Body, signal?: AbortSignal): Promise<Totals> {
  const answer = await queryMetrics({ ...body, dimensions: [], totals: true }, signal);
  if (!answer.totals) throw new Error('/analytics/batch answered without totals');
  return Object.fromEntries(body.metrics.map((m) => [m, answer.totals![m] ?? null]));
}

function flush(): void {
  const byProject = new Map<unknown, Waiting[]>();
  for (const w of pending) byProject.set(w.body.project_id, [...(byProject.get(w.body.project_id) ?? []), w]);
  pending = [];
  for (const [projectId, waiting] of byProject) void send(projectId, waiting);
}

async function send(projectId: unknown, waiting: Waiting[]): Promise<void> {
  let answers: AnalyticsBatchRes['answers'];
  try {
    ({ answers } = await post<AnalyticsBatchRes>('/analytics/batch', { project_id: projectId, queries: waiting.map((w) => w.body) }));
  } catch (e) {
    for (const w of waiting) w.reject(e);
    return;
  }
  waiting.forEach((w, i) => {
    const a = answers[i];
    if (!a) w.reject(new Error('/analytics/batch answered fewer queries than asked'));
    else if ('error' in a) w.reject(new ApiError(a.error.status, a.error.reason, a.error.field));
    else w.resolve(a);
  });
}
