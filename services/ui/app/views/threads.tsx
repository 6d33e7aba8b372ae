import { postJsonl } from '../api';
import { Layout } from '../components/layout';
import { LinkRow } from '../components/link-row';
import { Empty, ErrorBox, Loading } from '../components/states';
import { fmtAgo, fmtInt, fmtMs, fmtTime } from '../format';
import { projectHref, type Route } from '../route';
import type { Thread } from '../types';
import { useAsync } from '../use-async';

const THREADS_LIMIT = 500;

/** Threads of a project, most recently active first (/threads/stream_query). */
export function ThreadsView({ projectId }: { projectId: string; route: Route }) {
  const { data, error, loading } = useAsync(
    (signal) =>
      postJsonl<Thread>(
        '/threads/stream_query',
        { project_id: projectId, sort_by: [{ field: 'last_updated', direction: 'desc' }], limit: THREADS_LIMIT },
        signal,
      ),
    [projectId],
  );
  return (
    <Layout projectId={projectId} tab="threads">
      <h2>Threads</h2>
      {loading ? <Loading what="threads" /> : null}
      {error ? <ErrorBox error={error} /> : null}
      {data && data.length === 0 ? (
        <Empty title="No threads yet">
          <p>
            A thread groups the turns of a conversation: send calls with a <code>thread_id</code> and, on each turn's root call,{' '}
            <code>turn_id</code> equal to its id (the Weave SDK's <code>weave.thread()</code>; with OpenTelemetry,{' '}
            <code>gen_ai.conversation.id</code> or <code>session.id</code>).
          </p>
        </Empty>
      ) : null}
      {data && data.length > 0 ? (
        <table class="grid threads">
          <thead>
            <tr>
              <th>Thread</th>
              <th class="num">Turns</th>
              <th class="num">p50 turn</th>
              <th class="num">p99 turn</th>
              <th>Started</th>
              <th>Last activity</th>
            </tr>
          </thead>
          <tbody>
            {data.map((t) => {
              const to = projectHref(projectId, ['threads', t.thread_id]);
              return (
                <LinkRow key={t.thread_id} to={to}>
                  <td>
                    <a href={to}>
                      <code>{t.thread_id}</code>
                    </a>
                  </td>
                  <td class="num">{fmtInt(t.turn_count)}</td>
                  <td class="num">{fmtMs(t.p50_turn_duration_ms)}</td>
                  <td class="num">{fmtMs(t.p99_turn_duration_ms)}</td>
                  <td>{fmtTime(t.start_time)}</td>
                  <td title={fmtTime(t.last_updated)}>{fmtAgo(t.last_updated)}</td>
                </LinkRow>
              );
            })}
          </tbody>
        </table>
      ) : null}
      {data && data.length >= THREADS_LIMIT ? <p class="muted">The {THREADS_LIMIT} most recently active threads are shown.</p> : null}
    </Layout>
  );
}
