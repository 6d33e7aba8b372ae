import { useState } from 'preact/hooks';
import { addFeedback, callRef, NOTE, REACTION, removeFeedback, THUMBS_DOWN, THUMBS_UP } from '../feedback';
import { fmtTime } from '../format';
import { currentUserId } from '../me';
import type { Feedback } from '../types';
import { useAsync } from '../use-async';
import { JsonView } from './json-view';
import { ReactionIcon } from './reaction-icon';
import { ErrorBox } from './states';

/**
 * A call's feedback, and the user's own: thumbs up/down (a toggle per user, as in Weave) and
 * notes, written through /feedback/create as the SDK writes them; the user's own can be removed.
 */
export function Annotations({
  projectId,
  callId,
  initial,
  onChange,
}: {
  projectId: string;
  callId: string;
  initial: Feedback[];
  /** Told every new list (the trace keeps it, so coming back to the call shows it). */
  onChange?: (list: Feedback[]) => void;
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
  const me = useAsync(() => currentUserId(), []).data ?? null;
  const isMine = (f: Feedback) => me !== null && f.svc_user_id === me;
  const myReaction = (emoji: string) => list.find((f) => f.feedback_type === REACTION && f.payload?.emoji === emoji && isMine(f));
  const count = (emoji: string) => list.filter((f) => f.feedback_type === REACTION && f.payload?.emoji === emoji).length;

  const run = async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (e) {
      setError(e);
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
      const f = await addFeedback(projectId, callId, type, payload);
      setList((l) => [...l, f]);
    });
  const toggle = (emoji: string) => {
    const mine = myReaction(emoji);
    return mine ? remove(mine) : add(REACTION, { emoji });
  };

  return (
    <div class="annotations">
      <div class="annotate-bar" role="group" aria-label="Annotate">
        {[
          [THUMBS_UP, 'Thumbs up'],
          [THUMBS_DOWN, 'Thumbs down'],
        ].map(([emoji, label]) => (
          <button
            key={emoji}
            type="button"
            class="reaction-toggle"
            aria-label={label}
            aria-pressed={!!myReaction(emoji!)}
            disabled={busy}
            onClick={() => toggle(emoji!)}
          >
            <ReactionIcon emoji={emoji!} /> <span class="count">{count(emoji!) || ''}</span>
          </button>
        ))}
        <form
          class="note-form"
          onSubmit={(e) => {
            e.preventDefault();
            const text = note.trim();
            if (text) void add(NOTE, { note: text }).then(() => setNote(''));
          }}
        >
          <input
            name="note"
            aria-label="Note"
            placeholder="Add a note…"
            value={note}
            onInput={(e) => setNote((e.target as HTMLInputElement).value)}
          />
          <button type="submit" disabled={busy || note.trim() === ''}>
            Add note
          </button>
        </form>
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
              <FeedbackItem f={f} />
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

function FeedbackItem({ f }: { f: Feedback }) {
  const p = f.payload ?? {};
  let body;
  if (f.feedback_type === REACTION) body = <ReactionIcon emoji={String(p.emoji ?? '')} />;
  else if (f.feedback_type === NOTE) body = <span>“{String(p.note ?? '')}”</span>;
  else body = <JsonView value={p} />;
  return (
    <div class="feedback-item">
      <span class="feedback-type">{f.feedback_type}</span> {body} <span class="muted">{fmtTime(f.created_at)}</span>
    </div>
  );
}
