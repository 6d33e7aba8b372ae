import { useState } from 'preact/hooks';
import { postJsonl } from '../api';
import { Layout } from '../components/layout';
import { RefLink } from '../components/ref-link';
import { Empty, ErrorBox, Loading } from '../components/states';
import { describeRuns, evaluateOps, summaryMetrics, type EvalRun } from '../evaluations';
import { callCost, callStatus, fmtAgo, fmtCost, fmtInt, fmtMetric, fmtMs, fmtTime, latencyMs } from '../format';
import { navigate, projectHref, type Route } from '../route';
import type { Call } from '../types';
import { useAsync } from '../use-async';
import { StatusBadge } from './calls';
import { LeaderboardList } from './leaderboards';

export const RUNS_PAGE = 50;
export const MAX_COMPARED = 4;

/** A run's summary scores, one chip per metric (the root call's output, flattened). */
export function ScoreChips({ run }: { run: EvalRun }) {
  const metrics = summaryMetrics(run.call.output).filter((m) => !m.path.startsWith('model_latency'));
  if (!metrics.length) return <span class="muted">—</span>;
  return (
    <span class="score-chips">
      {metrics.map((m) => (
        <span key={m.path} class="score-chip" data-metric={m.path} data-value={String(m.value)} title={`${m.path} = ${m.value}`}>
          <span class="muted">{m.path}</span> {fmtMetric(m.value)}
        </span>
      ))}
    </span>
  );
}

/**
 * Evaluation runs (the Weave SDK's `Evaluation.evaluate` calls), newest first, a page at a time;
 * tick 2–4 to compare them (the first ticked is the baseline).
 */
export function EvaluationsView({ projectId, route }: { projectId: string; route: Route }) {
  const page = Math.max(0, Number(route.params.get('page') ?? 0) || 0);
  const [picked, setPicked] = useState<string[]>([]);
  const { data, error, loading } = useAsync(
    async (signal) => {
      const calls = await postJsonl<Call>(
        '/calls/stream_query',
        {
          project_id: projectId,
          filter: { op_names: evaluateOps(projectId) },
          sort_by: [{ field: 'started_at', direction: 'desc' }],
          // One more than a page: whether there is a next one.
          limit: RUNS_PAGE + 1,
          offset: page * RUNS_PAGE,
          include_costs: true,
        },
        signal,
      );
      return { runs: await describeRuns(calls.slice(0, RUNS_PAGE), signal), hasNext: calls.length > RUNS_PAGE };
    },
    [projectId, page],
  );
  const toggle = (id: string) => setPicked((p) => (p.includes(id) ? p.filter((x) => x !== id) : p.length < MAX_COMPARED ? [...p, id] : p));
  const go = (p: number) => navigate(projectHref(projectId, ['evaluations'], { page: p ? String(p) : null }));
  return (
    <Layout projectId={projectId} tab="evaluations">
      <div class="eval-head">
        <h2>Evaluations</h2>
        <span class="spacer" />
        <span class="muted">{picked.length ? `${picked.length} picked (the first is the baseline)` : 'Tick 2–4 runs to compare them'}</span>
        <button
          type="button"
          class="primary"
          disabled={picked.length < 2}
          onClick={() => navigate(projectHref(projectId, ['evaluations', 'compare'], { runs: picked.join(',') }))}
        >
          Compare {picked.length >= 2 ? picked.length : ''}
        </button>
      </div>
      {loading ? <Loading what="evaluations" /> : null}
      {error ? <ErrorBox error={error} /> : null}
      {data && data.runs.length === 0 && page === 0 ? (
        <Empty title="No evaluation runs yet">
          <p>
            Runs of the Weave SDK's <code>weave.Evaluation(dataset=…, scorers=[…]).evaluate(model)</code> show here.
          </p>
        </Empty>
      ) : null}
      {data && data.runs.length > 0 ? (
        <table class="grid evaluations">
          <thead>
            <tr>
              <th aria-label="Compare" />
              <th>Run</th>
              <th>Model</th>
              <th>Evaluation · dataset · scorers</th>
              <th>Scores</th>
              <th>Status</th>
              <th class="num">Cost</th>
              <th class="num">Latency</th>
              <th>When</th>
            </tr>
          </thead>
          <tbody>
            {data.runs.map((run) => {
              const c = run.call;
              const on = picked.includes(c.id);
              return (
                <tr key={c.id} class={on ? 'eval-run picked' : 'eval-run'} data-call-id={c.id}>
                  <td>
                    <input
                      type="checkbox"
                      aria-label={`Compare ${run.modelName} (${c.display_name ?? c.id})`}
                      checked={on}
                      disabled={!on && picked.length >= MAX_COMPARED}
                      onChange={() => toggle(c.id)}
                    />
                  </td>
                  <td>
                    <a href={projectHref(projectId, ['trace', c.trace_id], { call: c.id })}>{c.display_name ?? c.id.slice(0, 8)}</a>
                  </td>
                  <td class="eval-model">
                    <RefLink uri={run.modelRef} label={run.modelName} />
                  </td>
                  <td class="eval-what">
                    <RefLink uri={run.evaluationRef} label={run.evaluationName} />
                    <div>
                      <span class="muted">dataset</span> <RefLink uri={run.datasetRef} />
                    </div>
                    <div class="eval-scorers">
                      <span class="muted">scorers</span> {run.scorers.join(', ') || '—'}
                    </div>
                  </td>
                  <td class="eval-scores">
                    <ScoreChips run={run} />
                  </td>
                  <td>
                    <StatusBadge status={callStatus(c)} />
                  </td>
                  <td class="num">{fmtCost(callCost(c))}</td>
                  <td class="num">{fmtMs(latencyMs(c))}</td>
                  <td title={fmtTime(c.started_at)}>{fmtAgo(c.started_at)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      ) : null}
      {data && (page > 0 || data.hasNext) ? (
        <div class="pager">
          <button type="button" disabled={page === 0} onClick={() => go(page - 1)}>
            ← Newer
          </button>
          <span class="muted">page {fmtInt(page + 1)}</span>
          <button type="button" disabled={!data.hasNext} onClick={() => go(page + 1)}>
            Older →
          </button>
        </div>
      ) : null}
      <LeaderboardList projectId={projectId} />
    </Layout>
  );
}
