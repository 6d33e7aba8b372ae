import { post } from '../api';
import { JsonView } from '../components/json-view';
import { ExportMenu } from '../components/export-menu';
import { Layout } from '../components/layout';
import { Empty, ErrorBox, Loading } from '../components/states';
import { fmtInt } from '../format';
import { navigate, projectHref, type Route } from '../route';
import type { TableRow } from '../types';
import { useAsync } from '../use-async';

export const TABLE_PAGE_ROWS = 25;

/** A table's rows, a page at a time (`/table/query` limit/offset: a primary-key range on the server). */
export function TableRows({ projectId, digest, route }: { projectId: string; digest: string; route: Route }) {
  const page = Math.max(0, Number(route.params.get('page') ?? 0) || 0);
  const { data, error, loading } = useAsync(
    // One row more than the page tells whether a next page exists.
    (signal) =>
      post<{ rows: TableRow[] }>(
        '/table/query',
        { project_id: projectId, digest, limit: TABLE_PAGE_ROWS + 1, offset: page * TABLE_PAGE_ROWS },
        signal,
      ),
    [projectId, digest, page],
  );
  const rows = data?.rows.slice(0, TABLE_PAGE_ROWS) ?? [];
  const hasNext = (data?.rows.length ?? 0) > TABLE_PAGE_ROWS;
  const go = (p: number) => {
    const params = Object.fromEntries(route.params.entries());
    navigate(`#/${route.path.map(encodeURIComponent).join('/')}?${new URLSearchParams({ ...params, page: String(p) }).toString()}`);
  };
  // Columns: the keys of the rows' objects, in first-seen order.
  const columns: string[] = [];
  for (const r of rows)
    if (r.val && typeof r.val === 'object' && !Array.isArray(r.val))
      for (const k of Object.keys(r.val)) if (!columns.includes(k)) columns.push(k);
  return (
    <div class="table-rows">
      {loading ? <Loading what="rows" /> : null}
      {error ? <ErrorBox error={error} /> : null}
      {data && rows.length === 0 ? <Empty title={page === 0 ? 'This table has no rows' : 'No rows on this page'} /> : null}
      {rows.length > 0 ? (
        <table class="grid compact rows">
          <thead>
            <tr>
              <th class="num">#</th>
              {columns.length ? columns.map((c) => <th key={c}>{c}</th>) : <th>value</th>}
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={`${r.original_index}-${r.digest}`}>
                <td class="num">{r.original_index}</td>
                {columns.length ? (
                  columns.map((c) => {
                    const v = (r.val as Record<string, unknown>)[c];
                    return <td key={c}>{v !== null && typeof v === 'object' ? <JsonView value={v} /> : String(v ?? '')}</td>;
                  })
                ) : (
                  <td>
                    <JsonView value={r.val} />
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <div class="pager">
        <button type="button" disabled={page === 0} onClick={() => go(page - 1)}>
          ← Previous
        </button>
        <span class="muted">
          page {fmtInt(page + 1)} · rows {fmtInt(page * TABLE_PAGE_ROWS + (rows.length ? 1 : 0))}–
          {fmtInt(page * TABLE_PAGE_ROWS + rows.length)}
        </span>
        <button type="button" disabled={!hasNext} onClick={() => go(page + 1)}>
          Next →
        </button>
      </div>
    </div>
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
