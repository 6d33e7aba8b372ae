import { useState } from 'preact/hooks';
import { postJsonl } from '../api';
import { ExportMenu } from '../components/export-menu';
import { Layout } from '../components/layout';
import { RefLink } from '../components/ref-link';
import { Empty, ErrorBox, Loading } from '../components/states';
import {
  exampleValue,
  isRegression,
  loadComparison,
  MAX_EXAMPLE_CALLS,
  predictAndScoreOp,
  shownRows,
  stableJson,
  summaryMetrics,
  verdict,
  type Comparison,
  type EvalRun,
  type ExampleRow,
} from '../eval-compare';
import { readRefs } from '../evaluations';
import { callCost, callStatus, fmtCost, fmtInt, fmtMetric, fmtMs, latencyMs } from '../format';
import { navigate, projectHref, type Route } from '../route';
import type { Call } from '../types';
import { useAsync } from '../use-async';
import { StatusBadge } from './calls';
import { MAX_COMPARED } from './evaluations';

const EXAMPLES_PAGE = 100;

/** The comparison read over HTTP, as its export (/evaluations/export) reads it from the store. */
function compare(projectId: string, ids: string[], signal: AbortSignal): Promise<Comparison> {
  return loadComparison(ids, {
    roots: (callIds) =>
      postJsonl<Call>(
        '/calls/stream_query',
        { project_id: projectId, filter: { call_ids: callIds }, include_costs: true, limit: callIds.length },
        signal,
      ),
    children: (rootIds, limit) =>
      postJsonl<Call>(
        '/calls/stream_query',
        {
          project_id: projectId,
          filter: { parent_ids: rootIds, op_names: [predictAndScoreOp(projectId)] },
          sort_by: [{ field: 'started_at', direction: 'asc' }],
          limit,
        },
        signal,
      ),
    readRefs: (refs) => readRefs(refs, signal),
  });
}

/** Summary metrics of 2–4 runs side by side, each against the first (the baseline). */
function SummaryTable({ runs }: { runs: EvalRun[] }) {
  const paths: string[] = [];
  for (const r of runs) for (const m of summaryMetrics(r.call.output)) if (!paths.includes(m.path)) paths.push(m.path);
  const lines: { path: string; label: string; values: (number | null)[]; fmt: (v: number | null) => string }[] = [
    ...paths.map((path) => ({
      path,
      label: path,
      values: runs.map((r) => summaryMetrics(r.call.output).find((m) => m.path === path)?.value ?? null),
      fmt: fmtMetric,
    })),
    { path: 'latency', label: 'Latency', values: runs.map((r) => latencyMs(r.call)), fmt: fmtMs },
    { path: 'cost', label: 'Cost', values: runs.map((r) => callCost(r.call)), fmt: fmtCost },
  ];
  return (
    <table class="grid eval-summary">
      <thead>
        <tr>
          <th>Metric</th>
          {runs.map((r, i) => (
            <th key={r.call.id} class="num">
              <RunLabel run={r} baseline={i === 0} />
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        <tr>
          <td>Status</td>
          {runs.map((r) => (
            <td key={r.call.id} class="num">
              <StatusBadge status={callStatus(r.call)} />
            </td>
          ))}
        </tr>
        {lines.map((line) => (
          <tr key={line.path} data-metric={line.path}>
            <td>
              <code>{line.label}</code>
            </td>
            {line.values.map((v, i) => {
              const base = line.values[0] ?? null;
              const delta = i > 0 && v !== null && base !== null ? v - base : null;
              const how = i > 0 ? verdict(line.path, base, v) : 'none';
              return (
                <td
                  key={runs[i]!.call.id}
                  class={`num metric-cell ${how}`}
                  data-run={i}
                  data-value={v === null ? '' : String(v)}
                  data-delta={delta === null ? '' : String(delta)}
                >
                  {line.fmt(v)}
                  {delta !== null ? (
                    <span class="delta">
                      {' '}
                      ({delta > 0 ? '+' : delta < 0 ? '−' : '±'}
                      {line.path === 'latency'
                        ? fmtMs(Math.abs(delta))
                        : line.path === 'cost'
                          ? fmtCost(Math.abs(delta))
                          : fmtMetric(Math.abs(delta))}
                      )
                    </span>
                  ) : null}
                </td>
              );
            })}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function RunLabel({ run, baseline }: { run: EvalRun; baseline: boolean }) {
  return (
    <span class="run-label">
      <strong>{run.modelName}</strong> {baseline ? <span class="badge baseline">baseline</span> : null}
      <br />
      <span class="muted">{run.call.display_name ?? run.call.id.slice(0, 8)}</span>
    </span>
  );
}

/** A dataset row's inputs, compact: `key: value` lines. */
function ExampleInputs({ value }: { value: unknown }) {
  if (value && typeof value === 'object' && !Array.isArray(value))
    return (
      <dl class="example-inputs">
        {Object.entries(value).map(([k, v]) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd>{short(v)}</dd>
          </div>
        ))}
      </dl>
    );
  return <code>{short(value)}</code>;
}

const short = (v: unknown) => {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s && s.length > 300 ? `${s.slice(0, 300)}…` : (s ?? 'null');
};

/** One run's output and scores on one example, marked against the baseline's; a link to its trace. */
function ResultCell({ projectId, row, run }: { projectId: string; row: ExampleRow; run: number }) {
  const mine = row.results[run];
  if (!mine) return <td class="result missing muted">no result</td>;
  const base = row.results[0];
  const differs = run > 0 && base ? stableJson(base.output) !== stableJson(mine.output) : false;
  const to = projectHref(projectId, ['trace', mine.call.trace_id], { call: mine.call.id });
  return (
    <td class={`result${differs ? ' differs' : ''}${run > 0 && isRegression(row, run) ? ' regressed' : ''}`} data-run={run}>
      <a
        class="result-link"
        href={to}
        title={
          mine.rawOutput !== undefined ? `Open this example's trace (stored as ${short(mine.rawOutput)})` : "Open this example's trace"
        }
      >
        <code class="result-output">{mine.call.exception ? 'error' : short(mine.output)}</code>
      </a>
      <div class="scores">
        {mine.scores.map((s) => {
          const how = run > 0 && base ? verdict(s.path, base.scores.find((b) => b.path === s.path)?.value ?? null, s.value) : 'none';
          return (
            <span key={s.path} class={`score ${how}`} data-score={s.path} data-value={String(s.value)}>
              <span class="muted">{s.path}</span> {s.bool ? String(s.value === 1) : fmtMetric(s.value)}
            </span>
          );
        })}
        {mine.trials > 1 ? <span class="muted">×{mine.trials} trials (first shown)</span> : null}
      </div>
    </td>
  );
}

/**
 * 2–4 evaluation runs compared (`?runs=a,b,…`, the first is the baseline): summary metrics with
 * deltas, then every example with each run's output and scores, regressions a tick away.
 */
export function EvaluationCompareView({ projectId, route }: { projectId: string; route: Route }) {
  const ids = (route.params.get('runs') ?? '').split(',').filter(Boolean).slice(0, MAX_COMPARED);
  const regressionsOnly = route.params.get('regressions') === '1';
  const [page, setPage] = useState(0);
  const { data, error, loading } = useAsync((signal) => compare(projectId, ids, signal), [projectId, ids.join(',')]);
  const setParam = (params: Record<string, string | null>) =>
    navigate(
      projectHref(projectId, ['evaluations', 'compare'], {
        runs: ids.join(','),
        regressions: regressionsOnly ? '1' : null,
        ...params,
      }),
      { replace: true },
    );
  const rows = data ? shownRows(data, regressionsOnly) : [];
  const shown = rows.slice(page * EXAMPLES_PAGE, (page + 1) * EXAMPLES_PAGE);
  return (
    <Layout projectId={projectId} tab="evaluations">
      <div class="crumbs">
        <a href={projectHref(projectId, ['evaluations'])}>Evaluations</a> / compare
      </div>
      {ids.length < 2 ? <Empty title="Pick 2–4 runs to compare">Tick them in the Evaluations list.</Empty> : null}
      {loading ? <Loading what="the comparison" /> : null}
      {error ? <ErrorBox error={error} /> : null}
      {data && data.runs.length < ids.length ? (
        <p class="error-text">{ids.length - data.runs.length} of the runs asked for were not found.</p>
      ) : null}
      {data && data.runs.length > 0 ? (
        <>
          <div class="compare-runs">
            {data.runs.map((r, i) => (
              <span key={r.call.id} class="compare-run">
                <RunLabel run={r} baseline={i === 0} /> · <RefLink uri={r.evaluationRef} label={r.evaluationName} /> ·{' '}
                <RefLink uri={r.datasetRef} />
                {i > 0 ? (
                  <button
                    type="button"
                    class="link"
                    onClick={() => setParam({ runs: [r.call.id, ...ids.filter((x) => x !== r.call.id)].join(',') })}
                  >
                    make baseline
                  </button>
                ) : null}
              </span>
            ))}
          </div>
          <h3>Summary</h3>
          <SummaryTable runs={data.runs} />
          <div class="eval-head">
            <h3>Examples</h3>
            <span class="muted">
              {fmtInt(rows.length)} of {fmtInt(data.rows.length)}
              {data.cut ? ` (the first ${fmtInt(MAX_EXAMPLE_CALLS)} results read)` : ''}
            </span>
            <span class="spacer" />
            <label class="check">
              <input
                type="checkbox"
                checked={regressionsOnly}
                onChange={(e) => {
                  setPage(0);
                  setParam({ regressions: (e.target as HTMLInputElement).checked ? '1' : null });
                }}
              />{' '}
              Regressions only (a score worse than the baseline's)
            </label>
            <ExportMenu
              path="/evaluations/export"
              body={{ project_id: projectId, call_ids: data.runs.map((r) => r.call.id), regressions_only: regressionsOnly }}
              fallbackName={`${projectId.replace('/', '-')}-evaluations`}
              formats={['csv', 'json', 'jsonl', 'parquet']}
            />
          </div>
          <table class="grid eval-examples">
            <thead>
              <tr>
                <th>Example</th>
                {data.runs.map((r, i) => (
                  <th key={r.call.id}>
                    <RunLabel run={r} baseline={i === 0} />
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {shown.map((row) => (
                <tr key={row.key} class="example-row" data-example-key={row.key}>
                  <td class="example">
                    <ExampleInputs value={exampleValue(data, row)} />
                  </td>
                  {data.runs.map((r, i) => (
                    <ResultCell key={r.call.id} projectId={projectId} row={row} run={i} />
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
          {rows.length === 0 ? (
            <p class="muted">{regressionsOnly ? 'No example scored worse than the baseline.' : 'No examples.'}</p>
          ) : null}
          {rows.length > EXAMPLES_PAGE ? (
            <div class="pager">
              <button type="button" disabled={page === 0} onClick={() => setPage(page - 1)}>
                ← Previous
              </button>
              <span class="muted">
                examples {fmtInt(page * EXAMPLES_PAGE + 1)}–{fmtInt(page * EXAMPLES_PAGE + shown.length)}
              </span>
              <button type="button" disabled={(page + 1) * EXAMPLES_PAGE >= rows.length} onClick={() => setPage(page + 1)}>
                Next →
              </button>
            </div>
          ) : null}
        </>
      ) : null}
    </Layout>
  );
}
