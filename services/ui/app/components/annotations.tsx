import { useRef, useState } from 'preact/hooks';
import { ANNOTATION_PREFIX, annotationType, appliesTo, fmtValue, projectSpecs, type AnnotationSpec } from '../annotation-specs';
import { addFeedback, callRef, NOTE, REACTION, removeFeedback, replaceFeedback, THUMBS_DOWN, THUMBS_UP } from '../feedback';
import { fmtTime } from '../format';
import { currentUserId } from '../me';
import type { Feedback } from '../types';
import { useAsync } from '../use-async';
import { useBodyKeys } from '../use-body-keys';
import { JsonView } from './json-view';
import { UserName } from './user-name';
import { NewSpecForm } from './new-spec-form';
import { ReactionIcon } from './reaction-icon';
import { blurToPage, ScoreField } from './score-field';
import { ErrorBox } from './states';

/**
 * A call's feedback, and the user's own: thumbs up/down (a toggle per user, as in Weave), notes,
 * and a score per AnnotationSpec, written through /feedback/create (a changed score through
 * /feedback/replace) as the SDK writes them; the user's own can be removed. With `keys`, the
 * page's keys annotate: u/d thumbs, n a note, 1–9 a score.
 */
export function Annotations({
  projectId,
  callId,
  opName,
  initial,
  onChange,
  specs: givenSpecs,
  queueId,
  keys = false,
  onWrite,
}: {
  projectId: string;
  callId: string;
  opName: string;
  initial: Feedback[];
  /** Told every new list (the trace keeps it, so coming back to the call shows it). */
  onChange?: (list: Feedback[]) => void;
  /** The scores to ask (an annotation queue's); by default every AnnotationSpec of the project. */
  specs?: AnnotationSpec[];
  /** The queue the feedback is given in (recorded as its queue_id). */
  queueId?: string;
  keys?: boolean;
  /** Told after each write that succeeded. */
  onWrite?: () => void;
}) {
  const [list, setListState] = useState(initial);
  const setList = (next: (l: Feedback[]) => Feedback[]) =>
    setListState((l) => {
      const n = next(l);
      onChange?.(n);
      return n;
    });
  const [note, setNote] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<AnnotationSpec[]>([]);
  const noteInput = useRef<HTMLInputElement>(null);
  const me = useAsync(() => currentUserId(), []).data ?? null;
  const loaded = useAsync(
    (signal) => (givenSpecs ? Promise.resolve(givenSpecs) : projectSpecs(projectId, signal)),
    [projectId, givenSpecs],
  );
  const specs = [...(loaded.data ?? []), ...created.filter((c) => !loaded.data?.some((s) => s.objectId === c.objectId))].filter((s) =>
    appliesTo(s, opName),
  );
  const isMine = (f: Feedback) => me !== null && f.svc_user_id === me;
  const myReaction = (emoji: string) => list.find((f) => f.feedback_type === REACTION && f.payload?.emoji === emoji && isMine(f));
  const count = (emoji: string) => list.filter((f) => f.feedback_type === REACTION && f.payload?.emoji === emoji).length;
  const scoresOf = (s: AnnotationSpec) => list.filter((f) => f.feedback_type === annotationType(s));
  // The user's current score: their latest record of that spec.
  const myScore = (s: AnnotationSpec) => scoresOf(s).filter(isMine).at(-1);
  const links = (extra: { annotation_ref?: string } = {}) => ({ ...extra, ...(queueId ? { queue_id: queueId } : {}) });

  const run = async (work: () => Promise<void>): Promise<boolean> => {
    setBusy(true);
    setError(null);
    try {
      await work();
      onWrite?.();
      return true;
    } catch (e) {
      setError(e);
      return false;
    } finally {
      setBusy(false);
    }
  };
  const remove = (f: Feedback) =>
    run(async () => {
      await removeFeedback(projectId, f.id);
      setList((l) => l.filter((x) => x.id !== f.id));
    });
  const add = (type: string, payload: Record<string, unknown>) =>
    run(async () => {
      const f = await addFeedback(projectId, callId, type, payload, links());
      setList((l) => [...l, f]);
    });
  const toggle = (emoji: string) => {
    const mine = myReaction(emoji);
    return mine ? remove(mine) : add(REACTION, { emoji });
  };
  const setScore = (spec: AnnotationSpec, value: unknown) =>
    run(async () => {
      const previous = myScore(spec);
      const l = links({ annotation_ref: spec.ref });
      const f = previous
        ? await replaceFeedback(projectId, callId, previous.id, annotationType(spec), { value }, l)
        : await addFeedback(projectId, callId, annotationType(spec), { value }, l);
      setList((xs) => [...xs.filter((x) => x.id !== previous?.id), f]);
    });
  const addNote = () => {
    const text = note.trim();
    if (text) void add(NOTE, { note: text }).then((ok) => ok && (setNote(''), blurToPage()));
  };

  useBodyKeys((e) => {
    if (!keys || e.ctrlKey || e.metaKey || e.altKey || busy) return;
    if (e.key === 'u') void toggle(THUMBS_UP);
    else if (e.key === 'd') void toggle(THUMBS_DOWN);
    else if (e.key === 'n') noteInput.current?.focus();
    else if (/^[1-9]$/.test(e.key)) {
      const field = document.querySelector<HTMLElement>(`.score-field[data-score-index="${e.key}"]`);
      (field?.querySelector<HTMLElement>('.score-buttons, input, select') ?? null)?.focus();
    } else return;
    e.preventDefault();
  });

  const labelOf = (type: string) => specs.find((s) => annotationType(s) === type)?.label ?? type.slice(ANNOTATION_PREFIX.length);
  return (
    <div class="annotations">
      <div class="annotate-bar" role="group" aria-label="Annotate">
        {[
          [THUMBS_UP, 'Thumbs up', 'u'],
          [THUMBS_DOWN, 'Thumbs down', 'd'],
        ].map(([emoji, label, key]) => (
          <button
            key={emoji}
            type="button"
            class="reaction-toggle"
            aria-label={label}
            aria-pressed={!!myReaction(emoji!)}
            disabled={busy}
            onClick={() => toggle(emoji!)}
          >
            {keys ? <kbd>{key}</kbd> : null} <ReactionIcon emoji={emoji!} /> <span class="count">{count(emoji!) || ''}</span>
          </button>
        ))}
        <form
          class="note-form"
          onSubmit={(e) => {
            e.preventDefault();
            addNote();
          }}
        >
          <input
            ref={noteInput}
            name="note"
            aria-label="Note"
            placeholder={keys ? 'Add a note… (n)' : 'Add a note…'}
            value={note}
            onInput={(e) => setNote((e.target as HTMLInputElement).value)}
            onKeyDown={(e) => e.key === 'Escape' && blurToPage()}
          />
          <button type="submit" disabled={busy || note.trim() === ''}>
            Add note
          </button>
        </form>
      </div>
      <div class="annotation-scores" aria-label="Scores">
        {loaded.error ? <ErrorBox error={loaded.error} /> : null}
        {specs.map((s, i) => (
          <ScoreField
            key={s.ref}
            spec={s}
            index={i + 1}
            showKey={keys}
            mine={myScore(s)?.payload?.value}
            others={scoresOf(s)
              .filter((f) => !isMine(f))
              .map((f) => f.payload?.value)}
            busy={busy}
            onSet={(v) => setScore(s, v)}
            onClear={() => {
              const mine = myScore(s);
              if (mine) void remove(mine);
            }}
          />
        ))}
        {loaded.data && specs.length === 0 && !givenSpecs ? (
          <p class="muted">
            No scores defined. A score is a Weave <code>AnnotationSpec</code> (the SDK's{' '}
            <code>weave.publish(AnnotationSpec(name=…, field_schema=…))</code>), or:
          </p>
        ) : null}
        {givenSpecs ? null : creating ? (
          <NewSpecForm
            projectId={projectId}
            onCreated={(s) => {
              setCreated((c) => [...c, s]);
              setCreating(false);
            }}
            onCancel={() => setCreating(false)}
          />
        ) : (
          <button type="button" class="link" onClick={() => setCreating(true)}>
            + New score
          </button>
        )}
      </div>
      {error ? <ErrorBox error={error} /> : null}
      {list.length === 0 ? (
        <p class="muted">
          No feedback yet. The SDK reads what is added here with <code>call.feedback</code>; its ref is{' '}
          <code>{callRef(projectId, callId)}</code>.
        </p>
      ) : (
        <ul class="feedback">
          {list.map((f) => (
            <li key={f.id}>
              <FeedbackItem
                f={f}
                projectId={projectId}
                label={f.feedback_type.startsWith(ANNOTATION_PREFIX) ? labelOf(f.feedback_type) : undefined}
              />
              {isMine(f) ? (
                <button
                  type="button"
                  class="link remove"
                  aria-label={`Remove this ${f.feedback_type}`}
                  disabled={busy}
                  onClick={() => remove(f)}
                >
                  ✕
                </button>
              ) : null}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function FeedbackItem({ f, projectId, label }: { f: Feedback; projectId: string; label?: string }) {
  const p = f.payload ?? {};
  let body;
  if (f.feedback_type === REACTION) body = <ReactionIcon emoji={String(p.emoji ?? '')} />;
  else if (f.feedback_type === NOTE) body = <span>“{String(p.note ?? '')}”</span>;
  else if (label !== undefined && 'value' in p)
    body = (
      <span class="score-value">
        {label}: <strong>{fmtValue(p.value)}</strong>
      </span>
    );
  else body = <JsonView value={p} />;
  return (
    <div class="feedback-item">
      <span class="feedback-type">{f.feedback_type}</span> {body}{' '}
      {f.svc_user_id ? (
        <span class="feedback-by">
          by <UserName id={f.svc_user_id} projectId={projectId} />{' '}
        </span>
      ) : null}
      <span class="muted">{fmtTime(f.created_at)}</span>
    </div>
  );
}
