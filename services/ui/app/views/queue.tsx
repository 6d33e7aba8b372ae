import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { postJsonl } from '../api';
import { specsByRef, type AnnotationSpec } from '../annotation-specs';
import { Annotations } from '../components/annotations';
import { Payload, Section } from '../components/call-detail';
import { Layout } from '../components/layout';
import { Empty, ErrorBox, Loading } from '../components/states';
import { fmtTime, opLabel } from '../format';
import { currentUserId } from '../me';
import { MAX_QUEUE_ITEMS, queueItems, queueStats, readQueue, setProgress, type SettableState } from '../queues';
import { navigate, projectHref, type Route } from '../route';
import type { AnnotationQueueItem, Call, Feedback } from '../types';
import { useAsync } from '../use-async';
import { useBodyKeys } from '../use-body-keys';
import { ProgressBar } from './queues';

const isDone = (i: AnnotationQueueItem) => i.annotation_state === 'completed' || i.annotation_state === 'skipped';

/** A dotted path of a call (`inputs`, `output.choices`, `inputs.question`). */
function valueAt(call: Call, path: string): unknown {
  let v: unknown = call;
  for (const k of path.split('.')) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
  return v;
}

/**
 * One annotation queue, walked item by item (`#/p/<e>/<p>/queues/<id>?item=<n>`): the call's
 * display fields, thumbs, a note and the queue's scores, all from the keyboard (j/k move, u/d
 * thumbs, n a note, 1–9 a score, c done, s skip). Feedback carries the queue's id; the item's
 * state is the annotator's progress (/…/progress: in progress once something is written, then
 * completed or skipped), and the bar shows the server's count of done items.
 */
export function QueueView({ projectId, queueId, route }: { projectId: string; queueId: string; route: Route }) {
  const queue = useAsync((signal) => readQueue(projectId, queueId, signal), [projectId, queueId]);
  // Items, scores and stats once the queue is known to exist (a wrong id asks for nothing more).
  const specs = useAsync((signal) => (queue.data ? specsByRef(queue.data.scorer_refs, signal) : Promise.resolve(null)), [queue.data]);
  const loaded = useAsync((signal) => (queue.data ? queueItems(projectId, queueId, signal) : Promise.resolve(null)), [queue.data]);
  const [items, setItems] = useState<AnnotationQueueItem[] | null>(null);
  useEffect(() => setItems(loaded.data ?? null), [loaded.data]);
  // The latest states, for progress updates made after a render (a write finishing, a key pressed at once).
  const itemsNow = useRef(items);
  itemsNow.current = items;
  const [statsTick, setStatsTick] = useState(0);
  const stats = useAsync(
    (signal) => (queue.data ? queueStats(projectId, [queueId], signal) : Promise.resolve(null)),
    [queue.data, statsTick],
  );
  const me = useAsync(() => currentUserId(), []).data ?? null;
  const [error, setError] = useState<unknown>(null);
  // Progress updates go one after another, in the order asked.
  const chain = useRef<Promise<unknown>>(Promise.resolve());

  const asked = Number(route.params.get('item'));
  // Without ?item= the walk starts at the first item nobody finished.
  const index = items?.length
    ? Number.isInteger(asked) && asked >= 1
      ? Math.min(asked, items.length) - 1
      : Math.max(
          0,
          items.findIndex((i) => !isDone(i)),
        )
    : 0;
  const item = items?.[index];
  const go = (i: number) =>
    items &&
    navigate(projectHref(projectId, ['queues', queueId], { item: String(Math.max(1, Math.min(items.length, i + 1))) }), { replace: true });

  const progress = (itemId: string, state: SettableState): Promise<boolean> => {
    const step = chain.current.then(async () => {
      const it = itemsNow.current?.find((x) => x.id === itemId);
      if (!it) return false;
      // Finished by this annotator: nothing to change (the server refuses leaving completed or skipped).
      if (isDone(it) && it.annotator_user_id === me) return true;
      if (state === 'in_progress' && it.annotation_state !== 'unstarted') return true;
      setError(null);
      try {
        const updated = await setProgress(projectId, queueId, it.id, state);
        const next = itemsNow.current?.map((x) => (x.id === updated.id ? updated : x)) ?? null;
        itemsNow.current = next;
        setItems(next);
        setStatsTick((t) => t + 1);
        return true;
      } catch (e) {
        setError(e);
        return false;
      }
    });
    chain.current = step;
    return step;
  };
  const finish = async (state: 'completed' | 'skipped') => {
    if (item && (await progress(item.id, state)) && items && index < items.length - 1) go(index + 1);
  };

  useBodyKeys((e) => {
    if (!items || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === 'j' || e.key === 'ArrowDown' || e.key === 'ArrowRight') go(index + 1);
    else if (e.key === 'k' || e.key === 'ArrowUp' || e.key === 'ArrowLeft') go(index - 1);
    else if (e.key === 'c' || e.key === 'Enter') void finish('completed');
    else if (e.key === 's') void finish('skipped');
    else return;
    e.preventDefault();
  });

  const done = items?.filter(isDone).length ?? 0;
  const server = stats.data?.get(queueId);
  return (
    <Layout projectId={projectId} tab="queues">
      <div class="crumbs">
        <a href={projectHref(projectId, ['queues'])}>Queues</a> / {queue.data?.name ?? queueId}
      </div>
      {queue.error ? <ErrorBox error={queue.error} /> : null}
      {specs.error ? <ErrorBox error={specs.error} /> : null}
      {loaded.error ? <ErrorBox error={loaded.error} /> : null}
      {queue.loading || loaded.loading ? <Loading what="queue" /> : null}
      {queue.data && items ? (
        <>
          <div class="queue-head">
            <div>
              <h2>{queue.data.name}</h2>
              {queue.data.description ? <p class="muted">{queue.data.description}</p> : null}
            </div>
            <span class="spacer" />
            <div
              class="queue-progress"
              data-done={done}
              data-total={items.length}
              data-server-done={server?.completed_items}
              data-server-total={server?.total_items}
            >
              <ProgressBar done={server?.completed_items ?? done} total={server?.total_items ?? items.length} label="Queue progress" />
              <span class="muted"> done</span>
            </div>
          </div>
          <p class="muted key-legend">
            <kbd>j</kbd>/<kbd>k</kbd> next/previous · <kbd>u</kbd>/<kbd>d</kbd> thumbs · <kbd>n</kbd> note · <kbd>1</kbd>–<kbd>9</kbd> a
            score · <kbd>c</kbd> done and next · <kbd>s</kbd> skip · <kbd>Esc</kbd> leaves a field
          </p>
          {items.length >= MAX_QUEUE_ITEMS ? <p class="muted">The first {MAX_QUEUE_ITEMS} items.</p> : null}
          {error ? <ErrorBox error={error} /> : null}
          {items.length > 0 && done === items.length ? (
            <p class="queue-finished" role="status">
              All {items.length} items are done. <a href={projectHref(projectId, ['queues'])}>Back to the queues</a>
            </p>
          ) : null}
          {items.length === 0 ? (
            <Empty title="This queue is empty">
              <p>
                Tick calls in the <a href={projectHref(projectId, ['calls'])}>calls table</a> and <em>Add to queue…</em>.
              </p>
            </Empty>
          ) : (
            <div class="queue-walk">
              <ol class="queue-items" aria-label="Items">
                {items.map((it, i) => (
                  <li
                    key={it.id}
                    class={`queue-item-row${i === index ? ' active' : ''}`}
                    aria-current={i === index ? 'true' : undefined}
                    data-state={it.annotation_state}
                    data-item-id={it.id}
                    onClick={() => go(i)}
                  >
                    <span class="muted">{i + 1}</span> <span class="queue-item-op">{opLabel(it.call_op_name)}</span>
                    <span class={`badge state-${it.annotation_state}`}>{it.annotation_state.replace('_', ' ')}</span>
                  </li>
                ))}
              </ol>
              {item && specs.data && !specs.loading ? (
                <QueueItem
                  key={item.id}
                  projectId={projectId}
                  queueId={queueId}
                  item={item}
                  position={index + 1}
                  count={items.length}
                  specs={specs.data}
                  onWrite={() => void progress(item.id, 'in_progress')}
                  onPrev={() => go(index - 1)}
                  onNext={() => go(index + 1)}
                  onFinish={(s) => void finish(s)}
                />
              ) : null}
            </div>
          )}
        </>
      ) : null}
    </Layout>
  );
}

function QueueItem({
  projectId,
  queueId,
  item,
  position,
  count,
  specs,
  onWrite,
  onPrev,
  onNext,
  onFinish,
}: {
  projectId: string;
  queueId: string;
  item: AnnotationQueueItem;
  position: number;
  count: number;
  specs: AnnotationSpec[];
  onWrite: () => void;
  onPrev: () => void;
  onNext: () => void;
  onFinish: (s: 'completed' | 'skipped') => void;
}) {
  const call = useAsync(
    async (signal) => {
      const [c] = await postJsonl<Call>(
        '/calls/stream_query',
        { project_id: projectId, filter: { call_ids: [item.call_id] }, include_feedback: true, include_costs: true },
        signal,
      );
      return c ?? null;
    },
    [projectId, item.call_id],
  );
  const fields = useMemo(() => (item.display_fields.length ? item.display_fields : ['inputs', 'output']), [item.display_fields]);
  const c = call.data;
  return (
    <section class="queue-item" aria-label={`Item ${position} of ${count}`} data-call-id={item.call_id}>
      <div class="detail-head">
        <h3 title={item.call_op_name}>
          {position} / {count} · {c?.display_name || opLabel(item.call_op_name)}
        </h3>
        <span class={`badge state-${item.annotation_state}`}>{item.annotation_state.replace('_', ' ')}</span>
        <span class="spacer" />
        <a href={projectHref(projectId, ['trace', item.call_trace_id], { call: item.call_id })}>open in its trace</a>
      </div>
      <div class="muted">{fmtTime(item.call_started_at)}</div>
      {call.loading ? <Loading what="call" /> : null}
      {call.error ? <ErrorBox error={call.error} /> : null}
      {call.data === null ? <Empty title="This call is gone">It was deleted after it was queued.</Empty> : null}
      {c ? (
        <>
          <Section title="Annotate" open>
            <Annotations
              projectId={projectId}
              callId={c.id}
              opName={c.op_name}
              initial={((c.summary?.weave as Record<string, unknown> | undefined)?.feedback ?? []) as Feedback[]}
              specs={specs}
              queueId={queueId}
              keys
              onWrite={onWrite}
            />
          </Section>
          {fields.map((f) => (
            <Section key={f} title={f} open>
              <Payload value={valueAt(c, f)} />
            </Section>
          ))}
        </>
      ) : null}
      <div class="queue-nav">
        <button type="button" onClick={onPrev} disabled={position === 1}>
          ← Previous <kbd>k</kbd>
        </button>
        <span class="spacer" />
        <button type="button" onClick={() => onFinish('skipped')}>
          Skip <kbd>s</kbd>
        </button>
        <button type="button" class="primary" onClick={() => onFinish('completed')}>
          Done <kbd>c</kbd>
        </button>
        <button type="button" onClick={onNext} disabled={position === count}>
          Next <kbd>j</kbd> →
        </button>
      </div>
    </section>
  );
}
