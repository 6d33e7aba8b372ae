import { useEffect, useState } from 'preact/hooks';
import { FILTER_KEYS, rootsOnly, type CallsFilter } from '../calls-filter';
import { FEEDBACK_FILTERS } from '../feedback-filter';

const STATUSES = ['', 'success', 'error', 'running', 'descendant_error'];

/** Filter inputs; applied on Enter or "Apply" (each applied filter is a new URL). */
export function FilterBar({
  value,
  onApply,
  fields = FILTER_KEYS,
}: {
  value: CallsFilter;
  onApply: (f: CallsFilter) => void;
  fields?: readonly string[];
}) {
  const [draft, setDraft] = useState<CallsFilter>(value);
  const [showExpr, setShowExpr] = useState(!!value.expr);
  useEffect(() => setDraft(value), [JSON.stringify(value)]);
  const set = (k: keyof CallsFilter) => (e: Event) => setDraft({ ...draft, [k]: (e.target as HTMLInputElement).value || undefined });
  const has = (k: string) => fields.includes(k);
  const submit = (e: Event) => {
    e.preventDefault();
    onApply(draft);
  };
  // A control that applies at once updates the draft in the same render as the URL: otherwise a
  // render in between (the new URL, the old draft) would put the old value back into the control.
  const applyNow = (next: CallsFilter) => {
    setDraft(next);
    onApply(next);
  };
  return (
    <form class="filter-bar" onSubmit={submit} aria-label="Filter calls">
      {has('op') ? (
        <label>
          Op <input name="op" placeholder="name, prefix*, a, b" value={draft.op ?? ''} onInput={set('op')} />
        </label>
      ) : null}
      {has('status') ? (
        <label>
          Status
          <select
            name="status"
            value={draft.status ?? ''}
            onChange={(e) => applyNow({ ...draft, status: (e.target as HTMLSelectElement).value || undefined })}
          >
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s || 'any'}
              </option>
            ))}
          </select>
        </label>
      ) : null}
      <label>
        From <input name="from" type="datetime-local" step="1" value={draft.from ?? ''} onInput={set('from')} />
      </label>
      <label>
        To <input name="to" type="datetime-local" step="1" value={draft.to ?? ''} onInput={set('to')} />
      </label>
      {has('feedback') ? (
        <label>
          Feedback
          <select
            name="feedback"
            value={draft.feedback ?? ''}
            onChange={(e) => onApply({ ...draft, feedback: (e.target as HTMLSelectElement).value || undefined })}
          >
            <option value="">—</option>
            {FEEDBACK_FILTERS.map(([v, label]) => (
              <option key={v} value={v}>
                {label}
              </option>
            ))}
          </select>
        </label>
      ) : null}
      {has('trace') ? (
        <label>
          Trace <input name="trace" placeholder="trace id" value={draft.trace ?? ''} onInput={set('trace')} size={12} />
        </label>
      ) : null}
      {has('thread') ? (
        <label>
          Thread <input name="thread" placeholder="thread id" value={draft.thread ?? ''} onInput={set('thread')} size={12} />
        </label>
      ) : null}
      {has('q') ? (
        <label class="grow">
          Search{' '}
          <input
            name="q"
            type="search"
            placeholder="text in inputs, output, attributes, op, name, exception"
            value={draft.q ?? ''}
            onInput={set('q')}
          />
        </label>
      ) : null}
      {has('roots') ? (
        <label class="check">
          <input
            name="roots"
            type="checkbox"
            checked={rootsOnly(draft)}
            onChange={(e) => applyNow({ ...draft, roots: (e.target as HTMLInputElement).checked ? '1' : '0' })}
          />{' '}
          roots only
        </label>
      ) : null}
      {has('expr') ? (
        <button type="button" class="link" aria-expanded={showExpr} onClick={() => setShowExpr(!showExpr)}>
          $expr
        </button>
      ) : null}
      {draft.ref ? (
        <span class="chip" title={draft.ref}>
          uses <code>{draft.ref.replace(/^weave:\/\/\/[^/]+\/[^/]+\//, '')}</code>
          <button type="button" class="link" aria-label="Remove the ref filter" onClick={() => onApply({ ...draft, ref: undefined })}>
            ✕
          </button>
        </span>
      ) : null}
      <button type="submit" class="primary">
        Apply
      </button>
      <button type="button" onClick={() => onApply({})}>
        Clear
      </button>
      {showExpr && has('expr') ? (
        <label class="expr">
          Query <code>$expr</code>
          <textarea
            name="expr"
            rows={2}
            spellcheck={false}
            placeholder='{"$gt": [{"$getField": "inputs.n"}, {"$literal": 10}]}'
            value={draft.expr ?? ''}
            onInput={set('expr')}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) submit(e);
            }}
          />
        </label>
      ) : null}
    </form>
  );
}
