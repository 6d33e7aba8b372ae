import { post, postJsonl } from '../api';
import { Layout } from '../components/layout';
import { RefLink } from '../components/ref-link';
import { Empty, ErrorBox, Loading } from '../components/states';
import { describeRuns, evaluateOps, valueAt, type EvalRun } from '../evaluations';
import { fmtMetric, fmtTime } from '../format';
import { parseRef } from '../refs';
import { projectHref, type Route } from '../route';
import type { Call, ObjectVersion } from '../types';
import { useAsync } from '../use-async';

/** A Weave `LeaderboardColumn`: which evaluation, which scorer, which metric of its summary. */
interface Column {
  evaluation_object_ref: string;
  scorer_name: string;
  summary_metric_path: string;
  should_minimize?: boolean | null;
}

/** Runs read per evaluation of a leaderboard (the newest); older ones are not ranked. */
const RUNS_PER_EVALUATION = 1000;

/** The project's `Leaderboard` objects, under the evaluation runs. */
export function LeaderboardList({ projectId }: { projectId: string }) {
  const { data, error } = useAsync(
    (signal) =>
      post<{ objs: ObjectVersion[] }>(
        '/objs/query',
        {
          project_id: projectId,
          filter: { base_object_classes: ['Leaderboard'], latest_only: true },
          metadata_only: true,
          sort_by: [{ field: 'created_at', direction: 'desc' }],
          limit: 100,
        },
        signal,
      ),
    [projectId],
  );
  if (error) return <ErrorBox error={error} />;
  if (!data?.objs.length) return null;
  return (
    <section class="leaderboards">
      <h3>Leaderboards</h3>
      <ul>
        {data.objs.map((o) => (
          <li key={o.object_id}>
            <a href={projectHref(projectId, ['leaderboards', o.object_id])}>{o.object_id}</a>{' '}
            <span class="muted">updated {fmtTime(o.created_at)}</span>
          </li>
        ))}
      </ul>
    </section>
  );
}

interface Board {
  obj: ObjectVersion;
  columns: Column[];
  rows: { modelRef: string; modelName: string; cells: (EvalRun | null)[] }[];
}

async function loadBoard(projectId: string, name: string, digest: string, signal: AbortSignal): Promise<Board> {
  const { obj } = await post<{ obj: ObjectVersion }>('/obj/read', { project_id: projectId, object_id: name, digest }, signal);
  const val = (obj.val ?? {}) as { columns?: Column[] };
  const columns = (val.columns ?? []).filter((c) => typeof c?.evaluation_object_ref === 'string');
  const evalRefs = [...new Set(columns.map((c) => c.evaluation_object_ref))];
  // The runs of each evaluation, newest first: a model's newest run is its entry.
  const calls = await postJsonl<Call>(
    '/calls/stream_query',
    {
      project_id: projectId,
      filter: { op_names: evaluateOps(projectId), input_refs: evalRefs },
      sort_by: [{ field: 'started_at', direction: 'desc' }],
      limit: RUNS_PER_EVALUATION * Math.max(1, evalRefs.length),
    },
    signal,
  );
  const runs = await describeRuns(
    calls.filter((c) => !c.exception && c.ended_at),
    signal,
  );
  const rows = new Map<string, Board['rows'][number]>();
  for (const run of runs) {
    if (!run.modelRef) continue;
    let row = rows.get(run.modelRef);
    if (!row) {
      row = { modelRef: run.modelRef, modelName: run.modelName, cells: columns.map(() => null) };
      rows.set(run.modelRef, row);
    }
    columns.forEach((c, i) => {
      if (!row!.cells[i] && run.evaluationRef === c.evaluation_object_ref) row!.cells[i] = run;
    });
  }
  return { obj, columns, rows: [...rows.values()] };
}

const cellValue = (c: Column, run: EvalRun | null) =>
  run ? valueAt((run.call.output as Record<string, unknown> | null)?.[c.scorer_name], c.summary_metric_path) : null;

/**
 * A Weave `Leaderboard`: one column per (evaluation, scorer, summary metric), one row per model
 * (its newest run of each evaluation), the best value of each column marked; ranked by the first.
 */
export function LeaderboardView({ projectId, name, route }: { projectId: string; name: string; route: Route }) {
  const digest = route.params.get('v') ?? 'latest';
  const { data, error, loading } = useAsync((signal) => loadBoard(projectId, name, digest, signal), [projectId, name, digest]);
  const first = data?.columns[0];
  const rows = data
    ? [...data.rows].sort((a, b) => {
        if (!first) return 0;
        const x = cellValue(first, a.cells[0] ?? null) ?? -Infinity;
        const y = cellValue(first, b.cells[0] ?? null) ?? -Infinity;
        return first.should_minimize ? x - y : y - x;
      })
    : [];
  const best = data?.columns.map((c, i) => {
    const vals = rows.map((r) => cellValue(c, r.cells[i] ?? null)).filter((v): v is number => v !== null);
    return vals.length ? (c.should_minimize ? Math.min(...vals) : Math.max(...vals)) : null;
  });
  const description = (data?.obj.val as { description?: string } | undefined)?.description;
  return (
    <Layout projectId={projectId} tab="evaluations">
      <div class="crumbs">
        <a href={projectHref(projectId, ['evaluations'])}>Evaluations</a> / leaderboard <code>{name}</code>
      </div>
      {loading ? <Loading what="the leaderboard" /> : null}
      {error ? <ErrorBox error={error} /> : null}
      {data ? (
        <>
          <h2>{name}</h2>
          {description ? <p class="muted">{description}</p> : null}
          {data.columns.length === 0 ? <Empty title="This leaderboard has no columns" /> : null}
          {data.columns.length > 0 && rows.length === 0 ? (
            <Empty title="No runs of its evaluations yet">
              <p>A model shows here once an evaluation the leaderboard names has run on it.</p>
            </Empty>
          ) : null}
          {rows.length > 0 ? (
            <table class="grid leaderboard">
              <thead>
                <tr>
                  <th>Model</th>
                  {data.columns.map((c, i) => (
                    <th key={i} class="num" title={c.evaluation_object_ref}>
                      {parseRef(c.evaluation_object_ref)?.name ?? c.evaluation_object_ref}
                      <br />
                      <span class="muted">
                        {c.scorer_name}.{c.summary_metric_path}
                        {c.should_minimize ? ' ↓' : ' ↑'}
                      </span>
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {rows.map((r) => (
                  <tr key={r.modelRef} class="leaderboard-row" data-model={r.modelName}>
                    <td>
                      <RefLink uri={r.modelRef} label={r.modelName} />
                    </td>
                    {data.columns.map((c, i) => {
                      const run = r.cells[i] ?? null;
                      const v = cellValue(c, run);
                      return (
                        <td
                          key={i}
                          class={`num${v !== null && v === best?.[i] ? ' best' : ''}`}
                          data-column={`${c.scorer_name}.${c.summary_metric_path}`}
                          data-value={v === null ? '' : String(v)}
                        >
                          {run ? (
                            <a href={projectHref(projectId, ['trace', run.call.trace_id], { call: run.call.id })}>{fmtMetric(v)}</a>
                          ) : (
                            '—'
                          )}
                        </td>
                      );
                    })}
                  </tr>
                ))}
              </tbody>
            </table>
          ) : null}
        </>
      ) : null}
    </Layout>
  );
}
