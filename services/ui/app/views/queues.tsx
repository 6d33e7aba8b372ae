import { useState } from 'preact/hooks';
import { projectSpecs } from '../annotation-specs';
import { Layout } from '../components/layout';
import { LinkRow } from '../components/link-row';
import { ScoresAsked } from '../components/scores-asked';
import { Empty, ErrorBox, Loading } from '../components/states';
import { fmtAgo, fmtInt, fmtTime } from '../format';
import { createQueue, listQueues, queueStats, type QueueStats } from '../queues';
import { parseRef } from '../refs';
import { navigate, projectHref } from '../route';
import { useAsync } from '../use-async';

/** How far a queue is: a bar and `done / total`. */
export function ProgressBar({ done, total, label }: { done: number; total: number; label?: string }) {
  const pct = total ? Math.round((done / total) * 100) : 0;
  return (
    <span class="progress" title={`${done} of ${total} done`}>
      <span class="progress-track" role="progressbar" aria-valuemin={0} aria-valuemax={total} aria-valuenow={done} aria-label={label}>
        <span class="progress-fill" style={{ width: `${pct}%` }} />
      </span>
      <span class="progress-text">
        {fmtInt(done)} / {fmtInt(total)}
      </span>
    </span>
  );
}

/**
 * The project's annotation queues (`#/p/<e>/<p>/queues`), newest first, each with its progress
 * (`/annotation_queues/stats`: items completed or skipped by someone, of all); a new one is made
 * here with the scores it asks, and calls are added from the calls table.
 */
export function QueuesView({ projectId }: { projectId: string }) {
  const [creating, setCreating] = useState(false);
  const { data, error, loading } = useAsync(
    async (signal) => {
      const queues = await listQueues(projectId, signal);
      return { queues, stats: await queueStats(projectId, queues.map((q) => q.id).slice(0, 1000), signal) };
    },
    [projectId],
  );
  return (
    <Layout projectId={projectId} tab="queues">
      <div class="eval-head">
        <h2>Annotation queues</h2>
        <span class="spacer" />
        <button type="button" class="primary" onClick={() => setCreating(!creating)} aria-expanded={creating}>
          New queue
        </button>
      </div>
      {creating ? <NewQueueForm projectId={projectId} /> : null}
      {loading ? <Loading what="queues" /> : null}
      {error ? <ErrorBox error={error} /> : null}
      {data && data.queues.length === 0 ? (
        <Empty title="No annotation queues yet">
          <p>
            Make one here (or with the SDK), then tick calls in the <a href={projectHref(projectId, ['calls'])}>calls table</a> and{' '}
            <em>Add to queue…</em>; people then walk the queue with the keyboard and score each call.
          </p>
        </Empty>
      ) : null}
      {data && data.queues.length > 0 ? (
        <table class="grid queues">
          <thead>
            <tr>
              <th>Queue</th>
              <th>Scores</th>
              <th>Progress</th>
              <th>Created</th>
            </tr>
          </thead>
          <tbody>
            {data.queues.map((q) => {
              const to = projectHref(projectId, ['queues', q.id]);
              const s: QueueStats = data.stats.get(q.id) ?? { queue_id: q.id, total_items: 0, completed_items: 0 };
              return (
                <LinkRow key={q.id} to={to}>
                  <td class="queue-name" data-queue-id={q.id}>
                    <a href={to}>{q.name}</a>
                    {q.description ? <div class="muted">{q.description}</div> : null}
                  </td>
                  <td>{q.scorer_refs.map((r) => parseRef(r)?.name ?? r).join(', ') || <span class="muted">thumbs and notes</span>}</td>
                  <td class="queue-progress" data-done={s.completed_items} data-total={s.total_items}>
                    <ProgressBar done={s.completed_items} total={s.total_items} label={`${q.name} progress`} />
                  </td>
                  <td title={fmtTime(q.created_at)}>{fmtAgo(q.created_at)}</td>
                </LinkRow>
              );
            })}
          </tbody>
        </table>
      ) : null}
    </Layout>
  );
}

/** A new queue: its name, description and the AnnotationSpecs (scores) its annotators give. */
function NewQueueForm({ projectId }: { projectId: string }) {
  const specs = useAsync((signal) => projectSpecs(projectId, signal), [projectId]);
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [picked, setPicked] = useState<string[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const id = await createQueue(projectId, name.trim(), description.trim(), picked);
      navigate(projectHref(projectId, ['queues', id]));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="new-queue" aria-label="New queue" onSubmit={submit}>
      <label>
        Name <input name="queue-name" required value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
      </label>
      <label class="grow">
        Description{' '}
        <input name="queue-description" value={description} onInput={(e) => setDescription((e.target as HTMLInputElement).value)} />
      </label>
      <ScoresAsked specs={specs} picked={picked} setPicked={setPicked} />
      <button type="submit" class="primary" disabled={busy || name.trim() === ''}>
        Create queue
      </button>
      {error || specs.error ? <ErrorBox error={error ?? specs.error} /> : null}
    </form>
  );
}
