import { useState } from 'preact/hooks';
import { projectSpecs } from '../annotation-specs';
import { addCallsToQueue, createQueue, listQueues } from '../queues';
import { projectHref } from '../route';
import { useAsync } from '../use-async';
import { ScoresAsked } from './scores-asked';
import { ErrorBox } from './states';

const NEW = '__new__';

/**
 * Adds the selected calls to an annotation queue (`/annotation_queues/{id}/items`), or to a new
 * queue named here with the scores (AnnotationSpecs) its annotators give, picked as on the Queues
 * page; says how many went in and links to the queue.
 */
export function AddToQueue({ projectId, callIds }: { projectId: string; callIds: string[] }) {
  const [open, setOpen] = useState(false);
  const queues = useAsync((signal) => (open ? listQueues(projectId, signal) : Promise.resolve([])), [projectId, open]);
  const [choice, setChoice] = useState('');
  const [name, setName] = useState('');
  const [picked, setPicked] = useState<string[]>([]);
  const specs = useAsync(
    (signal) => (open && choice === NEW ? projectSpecs(projectId, signal) : Promise.resolve([])),
    [projectId, open, choice],
  );
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<{ queueId: string; name: string; added: number; duplicates: number } | null>(null);
  const add = async () => {
    setBusy(true);
    setError(null);
    try {
      let queueId = choice;
      let queueName = queues.data?.find((q) => q.id === choice)?.name ?? '';
      if (choice === NEW) {
        queueName = name.trim();
        queueId = await createQueue(projectId, queueName, '', picked);
      }
      const r = await addCallsToQueue(projectId, queueId, callIds);
      setDone({ queueId, name: queueName, added: r.added_count, duplicates: r.duplicates });
      setOpen(false);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  if (!open)
    return (
      <span class="add-to-queue">
        <button type="button" onClick={() => (setOpen(true), setDone(null))} disabled={callIds.length === 0}>
          Add to queue…
        </button>
        {done ? (
          <span class="done" role="status">
            {' '}
            Added {done.added} to <a href={projectHref(projectId, ['queues', done.queueId])}>{done.name}</a>
            {done.duplicates ? ` (${done.duplicates} already in it)` : ''}
          </span>
        ) : null}
      </span>
    );
  return (
    <form
      class="add-to-queue"
      aria-label="Add to queue"
      onSubmit={(e) => {
        e.preventDefault();
        void add();
      }}
    >
      <select name="queue" aria-label="Queue" value={choice} onChange={(e) => setChoice((e.target as HTMLSelectElement).value)}>
        <option value="">{queues.loading ? 'Loading queues…' : 'Pick a queue'}</option>
        {(queues.data ?? []).map((q) => (
          <option key={q.id} value={q.id}>
            {q.name}
          </option>
        ))}
        <option value={NEW}>New queue…</option>
      </select>
      {choice === NEW ? (
        <input
          name="queue-name"
          aria-label="New queue name"
          placeholder="Queue name"
          value={name}
          onInput={(e) => setName((e.target as HTMLInputElement).value)}
        />
      ) : null}
      {choice === NEW ? <ScoresAsked specs={specs} picked={picked} setPicked={setPicked} /> : null}
      <button type="submit" class="primary" disabled={busy || choice === '' || (choice === NEW && name.trim() === '')}>
        Add {callIds.length}
      </button>
      <button type="button" class="link" onClick={() => setOpen(false)}>
        Cancel
      </button>
      {error ? <ErrorBox error={error} /> : null}
      {queues.error ? <ErrorBox error={queues.error} /> : null}
      {specs.error ? <ErrorBox error={specs.error} /> : null}
    </form>
  );
}
