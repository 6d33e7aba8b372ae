import { useState } from 'preact/hooks';
import { post } from '../api';
import { definitionOf, sameState, stateOf, viewObjectId, type CallsViewState, type SavedViewVal } from '../saved-views';
import type { ObjectVersion } from '../types';
import { useAsync } from '../use-async';
import { ErrorBox } from './states';

/** The saved views a project lists at most (the newest). */
const VIEWS_LIMIT = 200;

/**
 * The calls view's saved views (Weave `SavedView` objects of view_type "traces"): open one, save
 * the current filter, sort and columns as a new view or as a new version of the open one.
 */
export function SavedViewsBar({
  projectId,
  state,
  view,
  columns,
  onOpen,
  onSaved,
  onClose,
}: {
  projectId: string;
  state: CallsViewState;
  /** The open view (`?view=`), once read. */
  view: { object_id: string; val: Partial<SavedViewVal> } | null;
  columns: { id: string; label: string }[];
  onOpen: (objectId: string) => void;
  onSaved: (objectId: string) => void;
  onClose: () => void;
}) {
  const [saves, setSaves] = useState(0);
  const list = useAsync(
    (signal) =>
      post<{ objs: ObjectVersion[] }>(
        '/objs/query',
        {
          project_id: projectId,
          filter: { base_object_classes: ['SavedView'], latest_only: true },
          sort_by: [{ field: 'created_at', direction: 'desc' }],
          limit: VIEWS_LIMIT,
        },
        signal,
      ),
    [projectId, saves],
  );
  const views = (list.data?.objs ?? [])
    .filter((o) => (o.val as Partial<SavedViewVal> | null)?.view_type === 'traces')
    .map((o) => ({ id: o.object_id, label: String((o.val as SavedViewVal).label ?? o.object_id) }))
    .sort((a, b) => a.label.localeCompare(b.label));
  const [naming, setNaming] = useState(false);
  const [label, setLabel] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const ids = columns.map((c) => c.id);
  const opened = view ? stateOf(view.val.definition ?? {}, projectId, ids) : null;
  const modified = opened ? !sameState(opened.state, state, projectId) : false;

  const save = async (objectId: string, viewLabel: string) => {
    setBusy(true);
    setError(null);
    try {
      const val: SavedViewVal = { view_type: 'traces', label: viewLabel, definition: definitionOf(state, projectId, columns) };
      await post('/obj/create', { obj: { project_id: projectId, object_id: objectId, val, builtin_object_class: 'SavedView' } });
      setNaming(false);
      setSaves((n) => n + 1);
      onSaved(objectId);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const saveAs = (e: Event) => {
    e.preventDefault();
    const text = label.trim();
    if (!text) return;
    // A new object unless a view of that very label exists (then its next version).
    const same = views.find((v) => v.label === text);
    let id = same?.id ?? viewObjectId(text);
    for (let n = 2; !same && views.some((v) => v.id === id); n++) id = `${viewObjectId(text)}-${n}`;
    void save(id, text);
  };

  return (
    <div class="views-bar">
      <label>
        Saved views{' '}
        <select
          aria-label="Saved view"
          value={view?.object_id ?? ''}
          onChange={(e) => {
            const id = (e.target as HTMLSelectElement).value;
            if (id) onOpen(id);
            else onClose();
          }}
        >
          <option value="">{views.length ? '— choose —' : '— none yet —'}</option>
          {views.map((v) => (
            <option key={v.id} value={v.id}>
              {v.label}
            </option>
          ))}
          {view && !views.some((v) => v.id === view.object_id) ? (
            <option value={view.object_id}>{view.val.label ?? view.object_id}</option>
          ) : null}
        </select>
      </label>
      {view ? (
        <span class="view-name" data-view-id={view.object_id}>
          {modified ? <span class="chip modified">modified</span> : null}
          {modified ? (
            <button type="button" disabled={busy} onClick={() => void save(view.object_id, String(view.val.label ?? view.object_id))}>
              Save
            </button>
          ) : null}
        </span>
      ) : null}
      {opened?.ignored.length ? (
        <span class="muted" title={opened.ignored.join(', ')}>
          (not shown here: {opened.ignored.join(', ')})
        </span>
      ) : null}
      {naming ? (
        <form class="save-view" onSubmit={saveAs}>
          <input
            aria-label="View name"
            placeholder="Name of the view"
            value={label}
            ref={(el) => el?.focus()}
            onInput={(e) => setLabel((e.target as HTMLInputElement).value)}
          />
          <button type="submit" class="primary" disabled={busy || !label.trim()}>
            Save view
          </button>
          <button type="button" class="link" onClick={() => setNaming(false)}>
            Cancel
          </button>
        </form>
      ) : (
        <button
          type="button"
          onClick={() => {
            setLabel('');
            setNaming(true);
          }}
        >
          {view ? 'Save as new view…' : 'Save view…'}
        </button>
      )}
      {state.filter.feedback ? <span class="muted">The Feedback filter is not saved with a view.</span> : null}
      {error ? <ErrorBox error={error} /> : null}
    </div>
  );
}
