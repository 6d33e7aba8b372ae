import { useState } from 'preact/hooks';
import { post } from '../api';
import { JsonView } from '../components/json-view';
import { ExportMenu } from '../components/export-menu';
import { Layout } from '../components/layout';
import { Empty, ErrorBox, Loading } from '../components/states';
import { cellText, columnsOf, parseCell, updatesForEdits, updateDataset, type Row } from '../datasets';
import { fmtInt } from '../format';
import { navigate, projectHref, type Route } from '../route';
import type { ObjectVersion, TableRow } from '../types';
import { useAsync } from '../use-async';

export const TABLE_PAGE_ROWS = 25;
const PAGE_SIZES = [25, 100, 500];

/** A cell: text as it is, other values as JSON. */
function Cell({ v }: { v: unknown }) {
  return v !== null && typeof v === 'object' ? <JsonView value={v} /> : <>{String(v ?? '')}</>;
}

/**
 * A table's rows, a page at a time (`/table/query` limit/offset: a primary-key range on the
 * server, as fast on row 99,900 as on row 0), with the total (`/table/query_stats`) and a jump
 * to any row. Given the dataset version that holds the table, rows can be edited and deleted;
 * the changes are saved together as the dataset's next version.
 */
export function TableRows({
  projectId,
  digest,
  route,
  dataset,
}: {
  projectId: string;
  digest: string;
  route: Route;
  /** The Dataset object version whose `rows` this table is: editable. */
  dataset?: ObjectVersion;
}) {
  const size = PAGE_SIZES.includes(Number(route.params.get('rows'))) ? Number(route.params.get('rows')) : TABLE_PAGE_ROWS;
  const page = Math.max(0, Number(route.params.get('page') ?? 0) || 0);
  const { data, error, loading } = useAsync(
    // One row more than the page tells whether a next page exists.
    (signal) => post<{ rows: TableRow[] }>('/table/query', { project_id: projectId, digest, limit: size + 1, offset: page * size }, signal),
    [projectId, digest, page, size],
  );
  const stats = useAsync(
    (signal) => post<{ count: number }>('/table/query_stats', { project_id: projectId, digest }, signal),
    [projectId, digest],
  );
  const total = stats.data?.count;
  const rows = data?.rows.slice(0, size) ?? [];
  const hasNext = (data?.rows.length ?? 0) > size;
  const go = (params: Record<string, string>) => {
    const next = new URLSearchParams({ ...Object.fromEntries(route.params.entries()), ...params });
    navigate(`#/${route.path.map(encodeURIComponent).join('/')}?${next.toString()}`);
  };
  const [jump, setJump] = useState('');
  // Pending changes to the dataset: row index → its new value, or null (deleted).
  const [edits, setEdits] = useState(new Map<number, Row | null>());
  const [editing, setEditing] = useState<number | null>(null);
  const [saving, setSaving] = useState(false);
  const [saveError, setSaveError] = useState<unknown>(null);
  const change = (index: number, row: Row | null | undefined) => {
    const next = new Map(edits);
    if (row === undefined) next.delete(index);
    else next.set(index, row);
    setEdits(next);
  };
  const save = async () => {
    setSaving(true);
    setSaveError(null);
    try {
      const newDigest = await updateDataset(projectId, dataset!, updatesForEdits(edits));
      setEdits(new Map());
      navigate(projectHref(projectId, ['objects', dataset!.object_id], { v: newDigest }));
    } catch (e) {
      setSaveError(e);
    } finally {
      setSaving(false);
    }
  };
  // Columns: the keys of the rows' objects, in the order they first appear.
  const columns = columnsOf(rows.map((r) => edits.get(r.original_index) ?? r.val));
  const deleted = [...edits.values()].filter((r) => r === null).length;
  return (
    <div class="table-rows">
      {dataset && edits.size ? (
        <div class="edit-bar" role="status">
          <strong>
            {fmtInt(edits.size - deleted)} edited, {fmtInt(deleted)} deleted
          </strong>
          <button type="button" class="primary" disabled={saving || editing !== null} onClick={() => void save()}>
            {saving ? 'Saving…' : 'Save as new version'}
          </button>
          <button type="button" disabled={saving} onClick={() => setEdits(new Map())}>
            Discard changes
          </button>
          {saveError ? <ErrorBox error={saveError} /> : null}
        </div>
      ) : null}
      {loading ? <Loading what="rows" /> : null}
      {error ? <ErrorBox error={error} /> : null}
      {data && rows.length === 0 ? <Empty title={page === 0 ? 'This table has no rows' : 'No rows on this page'} /> : null}
      {rows.length > 0 ? (
        <table class="grid compact rows">
          <thead>
            <tr>
              <th class="num">#</th>
              {columns.length ? columns.map((c) => <th key={c}>{c}</th>) : <th>value</th>}
              {dataset ? <th class="row-actions-head">Edit</th> : null}
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => {
              const index = r.original_index;
              const pending = edits.get(index);
              const val = pending ?? r.val;
              const state = pending === null ? 'deleted' : pending ? 'edited' : '';
              if (editing === index)
                return (
                  <RowEditor
                    key={`${index}-${r.digest}`}
                    index={index}
                    columns={columns}
                    row={(val ?? {}) as Row}
                    onDone={(row) => {
                      change(index, JSON.stringify(row) === JSON.stringify(r.val) ? undefined : row);
                      setEditing(null);
                    }}
                    onCancel={() => setEditing(null)}
                  />
                );
              return (
                <tr key={`${index}-${r.digest}`} class={state} data-row-index={index} data-row-digest={r.digest}>
                  <td class="num">{index}</td>
                  {columns.length ? (
                    columns.map((c) => (
                      <td key={c}>
                        <Cell v={(val as Row | null)?.[c]} />
                      </td>
                    ))
                  ) : (
                    <td>
                      <JsonView value={val} />
                    </td>
                  )}
                  {dataset ? (
                    <td class="row-actions">
                      {state === 'deleted' ? (
                        <button type="button" class="link" onClick={() => change(index, undefined)} aria-label={`Restore row ${index}`}>
                          Restore
                        </button>
                      ) : (
                        <>
                          <button type="button" class="link" onClick={() => setEditing(index)} aria-label={`Edit row ${index}`}>
                            Edit
                          </button>
                          <button type="button" class="link danger" onClick={() => change(index, null)} aria-label={`Delete row ${index}`}>
                            Delete
                          </button>
                          {state === 'edited' ? (
                            <button
                              type="button"
                              class="link"
                              onClick={() => change(index, undefined)}
                              aria-label={`Undo the edit of row ${index}`}
                            >
                              Undo
                            </button>
                          ) : null}
                        </>
                      )}
                    </td>
                  ) : null}
                </tr>
              );
            })}
          </tbody>
        </table>
      ) : null}
      <div class="pager">
        <button type="button" disabled={page === 0} onClick={() => go({ page: String(page - 1) })}>
          ← Previous
        </button>
        <span class="muted">
          page {fmtInt(page + 1)}
          {total !== undefined ? ` of ${fmtInt(Math.max(1, Math.ceil(total / size)))}` : ''} · rows{' '}
          {fmtInt(page * size + (rows.length ? 1 : 0))}–{fmtInt(page * size + rows.length)}
          {total !== undefined ? ` of ${fmtInt(total)}` : ''}
        </span>
        <button type="button" disabled={!hasNext} onClick={() => go({ page: String(page + 1) })}>
          Next →
        </button>
        <form
          class="jump"
          onSubmit={(e) => {
            e.preventDefault();
            const row = Number(jump);
            if (Number.isInteger(row) && row >= 0) go({ page: String(Math.floor(row / size)) });
          }}
        >
          <label>
            Go to row{' '}
            <input
              name="row"
              type="number"
              min={0}
              max={total}
              value={jump}
              onInput={(e) => setJump((e.target as HTMLInputElement).value)}
            />
          </label>
        </form>
        <label>
          Rows a page{' '}
          <select
            value={String(size)}
            onChange={(e) =>
              go({
                rows: (e.target as HTMLSelectElement).value,
                page: String(Math.floor((page * size) / Number((e.target as HTMLSelectElement).value))),
              })
            }
          >
            {PAGE_SIZES.map((n) => (
              <option key={n} value={String(n)}>
                {n}
              </option>
            ))}
          </select>
        </label>
      </div>
    </div>
  );
}

/** One row being edited: a field per column (strings as typed, other values as JSON). */
function RowEditor({
  index,
  columns,
  row,
  onDone,
  onCancel,
}: {
  index: number;
  columns: string[];
  row: Row;
  onDone: (row: Row) => void;
  onCancel: () => void;
}) {
  const [texts, setTexts] = useState<Record<string, string>>(() => Object.fromEntries(columns.map((c) => [c, cellText(row[c])])));
  const [error, setError] = useState<string | null>(null);
  const done = (e: Event) => {
    e.preventDefault();
    try {
      const next: Row = {};
      // The row's keys keep their order (then the page's other columns); a new cell left empty is not added.
      for (const c of [...Object.keys(row).filter((k) => columns.includes(k)), ...columns.filter((k) => !(k in row))]) {
        if (!(c in row) && texts[c] === '') continue;
        next[c] = parseCell(texts[c] ?? '', row[c]);
      }
      onDone(next);
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <tr class="editing" data-row-index={index}>
      <td class="num">{index}</td>
      {columns.map((c, i) => (
        <td key={c}>
          <textarea
            aria-label={`Row ${index} ${c}`}
            rows={1}
            value={texts[c]}
            ref={(el) => {
              if (i === 0 && el && document.activeElement?.tagName !== 'TEXTAREA') el.focus();
            }}
            onInput={(e) => setTexts({ ...texts, [c]: (e.target as HTMLTextAreaElement).value })}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && !e.shiftKey) done(e);
              if (e.key === 'Escape') onCancel();
            }}
          />
        </td>
      ))}
      <td class="row-actions">
        <button type="button" class="link" onClick={done}>
          Done
        </button>
        <button type="button" class="link" onClick={onCancel}>
          Cancel
        </button>
        {error ? (
          <div class="error-text" role="alert">
            {error}
          </div>
        ) : null}
      </td>
    </tr>
  );
}

/** `#/p/…/table/<digest>`: a table on its own (table refs link here). */
export function TableView({ projectId, digest, route }: { projectId: string; digest: string; route: Route }) {
  return (
    <Layout projectId={projectId} tab="objects">
      <div class="crumbs">
        <a href={projectHref(projectId, ['objects'])}>Objects</a> / table <code>{digest.slice(0, 16)}…</code>{' '}
        <ExportMenu path="/table/export" body={{ project_id: projectId, digest }} fallbackName={`table-${digest.slice(0, 12)}`} />
      </div>
      <TableRows projectId={projectId} digest={digest} route={route} />
    </Layout>
  );
}
