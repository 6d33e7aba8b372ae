import { postJsonl } from '../api';
import { Payload } from '../components/call-detail';
import { exceptionText } from '../exception';
import { Layout } from '../components/layout';
import { Empty, ErrorBox, Loading } from '../components/states';
import { callLabel, callStatus, fmtMs, fmtTime, latencyMs } from '../format';
import { projectHref } from '../route';
import type { Call } from '../types';
import { useAsync } from '../use-async';
import { StatusBadge } from './calls';

const MAX_TURNS = 1000;

/** One thread as its conversation: each turn's input and output, in order, each linking to its trace. */
export function ThreadView({ projectId, threadId }: { projectId: string; threadId: string }) {
  const { data, error, loading } = useAsync(
    async (signal) => {
      // Turns are the thread's calls whose turn_id is their own id.
      const calls = await postJsonl<Call>(
        '/calls/stream_query',
        {
          project_id: projectId,
          filter: { thread_ids: [threadId] },
          query: { $expr: { $eq: [{ $getField: 'turn_id' }, { $getField: 'id' }] } },
          sort_by: [{ field: 'started_at', direction: 'asc' }],
          limit: MAX_TURNS,
        },
        signal,
      );
      return calls;
    },
    [projectId, threadId],
  );
  return (
    <Layout projectId={projectId} tab="threads">
      <div class="crumbs">
        <a href={projectHref(projectId, ['threads'])}>Threads</a> / <code>{threadId}</code>
      </div>
      {loading ? <Loading what="thread" /> : null}
      {error ? <ErrorBox error={error} /> : null}
      {data && data.length === 0 ? (
        <Empty title="No turns in this thread">
          <p>
            Calls of a thread count as turns when their <code>turn_id</code> is their own id.
          </p>
        </Empty>
      ) : null}
      {data && data.length > 0 ? (
        <ol class="turns" aria-label="Turns">
          {data.map((t, i) => (
            <li key={t.id} class="turn" data-turn-id={t.id}>
              <div class="turn-head">
                <span class="turn-no">Turn {i + 1}</span>
                <span class="turn-op">{callLabel(t)}</span>
                <StatusBadge status={callStatus(t)} />
                <span class="muted">
                  {fmtTime(t.started_at)} · {fmtMs(latencyMs(t))}
                </span>
                <span class="spacer" />
                <a class="turn-trace" href={projectHref(projectId, ['trace', t.trace_id], { call: t.id })}>
                  Open trace →
                </a>
              </div>
              <div class="turn-body">
                <div class="turn-in">
                  <div class="turn-label">In</div>
                  <Payload value={t.inputs} />
                </div>
                <div class="turn-out">
                  <div class="turn-label">Out</div>
                  {t.exception ? <pre class="exception">{exceptionText(t.exception)}</pre> : <Payload value={t.output} />}
                </div>
              </div>
            </li>
          ))}
        </ol>
      ) : null}
    </Layout>
  );
}
