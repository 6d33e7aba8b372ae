import { useEffect, useState } from 'preact/hooks';
import { post, postJsonl } from '../api';
import {
  columnsOf,
  createDataset,
  defaultMapping,
  rowFromCall,
  rowsDigestOf,
  sourcesOf,
  updateDataset,
  type ColumnMapping,
  type Row,
} from '../datasets';
import { fmtInt } from '../format';
import type { ObjectVersion, TableRow } from '../types';
import { useAsync } from '../use-async';
import { JsonView } from './json-view';
import { ErrorBox, Loading } from './states';

const NEW = '';
const PREVIEW_ROWS = 3;

/**
 * "Add to dataset" for calls picked in the calls table: each call becomes a row, its inputs and
 * output mapped to columns, appended to a dataset as its next version (or a new dataset), the
 * way the Weave SDK writes them (datasets.ts).
 */
export function AddToDataset({
  projectId,
  callIds,
  onClose,
  onDone,
}: {
  projectId: string;
  callIds: string[];
  onClose: () => void;
  onDone: (r: { objectId: string; digest: string; rows: number }) => void;
}) {
  const calls = useAsync(
    (signal) =>
      postJsonl<Row>(
        '/calls/stream_query',
        {
          project_id: projectId,
          filter: { call_ids: callIds },
          columns: ['id', 'op_name', 'inputs', 'output', 'started_at'],
          sort_by: [{ field: 'started_at', direction: 'asc' }],
          limit: callIds.length,
        },
        signal,
      ),
    [projectId, callIds.join(',')],
  );
  const datasets = useAsync(
    (signal) =>
      post<{ objs: ObjectVersion[] }>(
        '/objs/query',
        {
          project_id: projectId,
          filter: { base_object_classes: ['Dataset'], latest_only: true },
          sort_by: [{ field: 'created_at', direction: 'desc' }],
          limit: 500,
        },
        signal,
      ),
    [projectId],
  );
  const [target, setTarget] = useState(NEW);
  const [name, setName] = useState('');
  const [mapping, setMapping] = useState<ColumnMapping[] | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const chosen = datasets.data?.objs.find((o) => o.object_id === target) ?? null;
  // The columns of the chosen dataset (its first rows'), for the mapping offered.
  const existing = useAsync(
    async (signal) => {
      const digest = chosen ? rowsDigestOf(chosen.val) : null;
      if (!digest) return null;
      const r = await post<{ rows: TableRow[] }>('/table/query', { project_id: projectId, digest, limit: 50 }, signal);
      return columnsOf(r.rows.map((x) => x.val));
    },
    [projectId, target, !!chosen],
  );
  useEffect(() => {
    if (calls.data && !existing.loading) setMapping(defaultMapping(calls.data, existing.data ?? null));
  }, [calls.data, existing.data, existing.loading]);

  const sources = calls.data ? sourcesOf(calls.data) : [];
  const rows = calls.data && mapping ? calls.data.map((c) => rowFromCall(c, mapping)) : [];
  const emptyRows = rows.filter((r) => Object.keys(r).length === 0).length;
  const set = (i: number, patch: Partial<ColumnMapping>) => setMapping(mapping!.map((m, k) => (k === i ? { ...m, ...patch } : m)));

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      if (emptyRows) throw new Error(`${emptyRows} call${emptyRows === 1 ? ' has' : 's have'} no value in any column: map a column it has`);
      if (target === NEW) {
        const objectId = name.trim();
        if (!objectId) throw new Error('Name the new dataset');
        const digest = await createDataset(projectId, objectId, rows);
        onDone({ objectId, digest, rows: rows.length });
      } else {
        const digest = await updateDataset(
          projectId,
          chosen!,
          rows.map((row) => ({ append: { row } })),
        );
        onDone({ objectId: target, digest, rows: rows.length });
      }
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  return (
    <div class="modal-backdrop" onClick={(e) => e.target === e.currentTarget && onClose()}>
      <form class="modal add-to-dataset" role="dialog" aria-modal="true" aria-label="Add to dataset" onSubmit={submit}>
        <h3>
          Add {fmtInt(callIds.length)} call{callIds.length === 1 ? '' : 's'} to a dataset
        </h3>
        {calls.loading || datasets.loading ? <Loading what="the calls" /> : null}
        {calls.error || datasets.error ? <ErrorBox error={calls.error ?? datasets.error} /> : null}
        <div class="form-row">
          <label>
            Dataset
            <select name="dataset" aria-label="Dataset" value={target} onChange={(e) => setTarget((e.target as HTMLSelectElement).value)}>
              <option value={NEW}>New dataset…</option>
              {datasets.data?.objs.map((o) => (
                <option key={o.object_id} value={o.object_id}>
                  {o.object_id} (now v{o.version_index})
                </option>
              ))}
            </select>
          </label>
          {target === NEW ? (
            <label>
              Name
              <input
                name="name"
                placeholder="letters, digits, _ . -"
                value={name}
                onInput={(e) => setName((e.target as HTMLInputElement).value)}
              />
            </label>
          ) : null}
        </div>
        <h4>Columns</h4>
        {mapping ? (
          <table class="grid compact mapping">
            <thead>
              <tr>
                <th>Column</th>
                <th>From the call</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {mapping.map((m, i) => (
                <tr key={i}>
                  <td>
                    <input
                      aria-label={`Column ${i + 1} name`}
                      value={m.column}
                      onInput={(e) => set(i, { column: (e.target as HTMLInputElement).value })}
                    />
                  </td>
                  <td>
                    <select
                      aria-label={`Column ${i + 1} source`}
                      value={m.source}
                      onChange={(e) => set(i, { source: (e.target as HTMLSelectElement).value })}
                    >
                      <option value="">(left out)</option>
                      {[...new Set([...sources, ...(m.source ? [m.source] : [])])].map((s) => (
                        <option key={s} value={s}>
                          {s}
                        </option>
                      ))}
                    </select>
                  </td>
                  <td>
                    <button
                      type="button"
                      class="link"
                      aria-label={`Remove column ${i + 1}`}
                      onClick={() => setMapping(mapping.filter((_, k) => k !== i))}
                    >
                      ✕
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : null}
        {mapping ? (
          <button type="button" class="link" onClick={() => setMapping([...mapping, { column: '', source: '' }])}>
            + Column
          </button>
        ) : null}
        {rows.length ? (
          <>
            <h4>
              Preview{' '}
              <span class="muted">
                (the first {Math.min(PREVIEW_ROWS, rows.length)} of {fmtInt(rows.length)} rows)
              </span>
            </h4>
            <div class="preview">
              <table class="grid compact rows">
                <thead>
                  <tr>
                    {columnsOf(rows).map((c) => (
                      <th key={c}>{c}</th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {rows.slice(0, PREVIEW_ROWS).map((r, i) => (
                    <tr key={i}>
                      {columnsOf(rows).map((c) => (
                        <td key={c}>{r[c] !== null && typeof r[c] === 'object' ? <JsonView value={r[c]} /> : String(r[c] ?? '')}</td>
                      ))}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </>
        ) : null}
        {error ? <ErrorBox error={error} /> : null}
        <div class="form-actions">
          <button type="submit" class="primary" disabled={busy || !rows.length}>
            {busy
              ? 'Adding…'
              : target === NEW
                ? `Create dataset with ${fmtInt(rows.length)} rows`
                : `Add ${fmtInt(rows.length)} rows as a new version`}
          </button>
          <button type="button" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </div>
  );
}
