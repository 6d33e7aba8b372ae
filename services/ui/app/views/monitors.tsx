import { scorePathOf } from '../alerts';
import { Layout } from '../components/layout';
import { Empty, ErrorBox, Loading } from '../components/states';
import { fmtAgo, fmtTime } from '../format';
import { judgesProject, listMonitors, monitorResults, type Monitor, type MonitorResult } from '../monitors';
import { parseRef } from '../refs';
import { projectHref } from '../route';
import { useAsync } from '../use-async';

/** Results read per monitor: its newest ones, and how many of them failed. */
const RECENT = 50;

const short = (v: unknown) => {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s && s.length > 80 ? `${s.slice(0, 80)}…` : (s ?? 'null');
};

/**
 * The project's monitors (`#/p/<e>/<p>/monitors`): each one's state (active or paused), the ops
 * it watches, its sampling rate and scorers, its newest results with the calls they scored, its
 * failures, and a link to the judges' project where LLM judges' requests are recorded.
 */
export function MonitorsView({ projectId }: { projectId: string }) {
  const { data, error, loading } = useAsync(
    async (signal) => {
      const monitors = await listMonitors(projectId, signal);
      const results = await Promise.all(monitors.map((m) => monitorResults(projectId, parseRef(m.ref)?.name ?? m.name, RECENT, signal)));
      return monitors.map((m, i) => ({ monitor: m, results: results[i]! }));
    },
    [projectId],
  );
  return (
    <Layout projectId={projectId} tab="monitors">
      <div class="eval-head">
        <h2>Monitors</h2>
        <span class="spacer" />
        <a class="judges-link" href={projectHref(judgesProject(projectId), ['calls'])}>
          LLM judges' requests ({judgesProject(projectId)})
        </a>
      </div>
      {error ? <ErrorBox error={error} /> : null}
      {loading && !data ? <Loading what="monitors" /> : null}
      {data && data.length === 0 ? (
        <Empty title="No monitors in this project">
          A monitor scores the calls it watches as they end: publish one with the Weave SDK,{' '}
          <code>weave.Monitor(name=…, op_names=[…], scorers=[…]).activate()</code>; its results show here and in the calls table's Feedback
          column (⚖).
        </Empty>
      ) : null}
      {data?.map(({ monitor, results }) => (
        <MonitorCard key={monitor.ref} projectId={projectId} monitor={monitor} results={results} />
      ))}
    </Layout>
  );
}

function MonitorCard({ projectId, monitor, results }: { projectId: string; monitor: Monitor; results: MonitorResult[] }) {
  const failures = results.filter((r) => r.error !== null);
  return (
    <section class="monitor" data-monitor={monitor.name} aria-label={`Monitor ${monitor.name}`}>
      <h3>
        {monitor.name}{' '}
        <span class={`badge ${monitor.active ? 'status-success' : 'status-running'}`} data-state={monitor.active ? 'active' : 'paused'}>
          {monitor.active ? 'active' : 'paused'}
        </span>
      </h3>
      <dl class="facts">
        <dt>Watches</dt>
        <dd>{monitor.opNames.length ? monitor.opNames.map((o) => <code key={o}>{o}</code>) : <span class="muted">every op</span>}</dd>
        <dt>Sampling</dt>
        <dd>{monitor.samplingRate === null ? '—' : `${Math.round(monitor.samplingRate * 100)} %`}</dd>
        <dt>Scorers</dt>
        <dd class="monitor-scorers">
          {monitor.scorers.length ? (
            monitor.scorers.map((scorer, i) => (
              <span key={i} class="monitor-scorer">
                {i ? ', ' : ''}
                <span class="monitor-scorer-name">{scorer}</span>{' '}
                <a
                  class="chart-alert"
                  href={alertHref(projectId, monitor, i, results)}
                  title="Alert me when this scorer's figure crosses a line"
                  aria-label={`Alert on ${scorer}`}
                >
                  🔔
                </a>
              </span>
            ))
          ) : (
            <span class="muted">none</span>
          )}
        </dd>
        <dt>Published</dt>
        <dd title={fmtTime(monitor.createdAt)}>{fmtAgo(monitor.createdAt)}</dd>
        <dt>Failures</dt>
        <dd class="monitor-failures" data-failures={failures.length}>
          {failures.length} of the last {results.length} results
          {failures[0] ? <span class="muted"> · latest: {failures[0].error}</span> : null}
        </dd>
      </dl>
      {results.length === 0 ? (
        <p class="muted">No results yet: calls are scored as they end, after the monitor was published.</p>
      ) : (
        <table class="grid compact monitor-results">
          <thead>
            <tr>
              <th>When</th>
              <th>Scorer</th>
              <th>Call</th>
              <th>Result</th>
            </tr>
          </thead>
          <tbody>
            {results.slice(0, 10).map((r, i) => {
              const call = parseRef(r.callRef);
              return (
                <tr key={i} class={r.error ? 'failed' : ''}>
                  <td title={fmtTime(r.createdAt)}>{fmtAgo(r.createdAt)}</td>
                  <td>{r.scorer}</td>
                  <td>{call ? <a href={projectHref(projectId, ['call', call.name])}>{call.name.slice(0, 8)}</a> : '—'}</td>
                  <td>
                    <code>{r.error ? `error: ${r.error}` : short(r.output)}</code>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}

/**
 * The Alerts tab's new-alert form filled in for a scorer of the monitor ("alert me when this
 * scorer's mean goes below …"): monitor_ref and scorer_ref, the path of its results' score.
 */
function alertHref(projectId: string, monitor: Monitor, i: number, results: MonitorResult[]): string {
  const scorer = monitor.scorers[i]!;
  const outputs = results.filter((r) => r.scorer === scorer && r.error === null).map((r) => r.output);
  return projectHref(projectId, ['alerts'], {
    monitor_ref: monitor.ref,
    scorer_ref: monitor.scorerRefs[i],
    metric: scorePathOf(outputs),
    aggregation: 'mean',
    comparison: 'LESS_THAN',
  });
}
