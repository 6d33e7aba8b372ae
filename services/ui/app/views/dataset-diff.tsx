import type { TableDiffEntry, TableDiffRes } from '@weft/api';
import { post } from '../api';
import { JsonView } from '../components/json-view';
import { Layout } from '../components/layout';
import { Empty, ErrorBox, Loading } from '../components/states';
import { columnsOf, rowsDigestOf, type Row } from '../datasets';
import { fmtInt } from '../format';
import { objectVersions } from '../objects';
import { navigate, projectHref, type Route } from '../route';
import type { ObjectVersion } from '../types';
import { useAsync } from '../use-async';

export const DIFF_PAGE = 100;

/** /table/diff's answer, its rows as the view reads them. */
type Diff = Omit<TableDiffRes, 'entries'> & {
  entries: (Omit<TableDiffEntry, 'base_val' | 'val'> & { base_val: Row | null; val: Row | null })[];
};

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

function Value({ v }: { v: unknown }) {
  if (v === undefined) return <span class="muted">—</span>;
  return v !== null && typeof v === 'object' ? <JsonView value={v} /> : <>{String(v)}</>;
}

/**
 * Two versions of a dataset (`#/p/…/objects/<name>/diff?base=<digest>&v=<digest>`): the rows
 * added, removed and changed, by row digest (/table/diff); a changed row shows each changed
 * cell old → new.
 */
export function DatasetDiffView({ projectId, objectId, route }: { projectId: string; objectId: string; route: Route }) {
  const baseDigest = route.params.get('base') ?? '';
  const digest = route.params.get('v') ?? 'latest';
  const page = Math.max(0, Number(route.params.get('page') ?? 0) || 0);
  const versions = useAsync((signal) => objectVersions(projectId, objectId, signal), [projectId, objectId]);
  const diff = useAsync(
    async (signal) => {
      const read = (d: string) =>
        post<{ obj: ObjectVersion }>('/obj/read', { project_id: projectId, object_id: objectId, digest: d }, signal).then((r) => r.obj);
      const [base, next] = await Promise.all([read(baseDigest || 'latest'), read(digest)]);
      const [from, to] = [rowsDigestOf(base.val), rowsDigestOf(next.val)];
      if (!from || !to) throw new Error(`${objectId} is not a dataset (no table ref in its rows)`);
      const d = await post<Diff>(
        '/table/diff',
        { project_id: projectId, base_digest: from, digest: to, limit: DIFF_PAGE, offset: page * DIFF_PAGE },
        signal,
      );
      return { base, next, diff: d };
    },
    [projectId, objectId, baseDigest, digest, page],
  );
  const set = (params: Record<string, string>) =>
    navigate(projectHref(projectId, ['objects', objectId, 'diff'], { base: baseDigest, v: digest, ...params }));
  const pick = (name: string, value: string, label: string) => (
    <label>
      {label}{' '}
      <select name={name} value={value} onChange={(e) => set({ [name]: (e.target as HTMLSelectElement).value, page: '0' })}>
        {versions.data?.objs.map((v) => (
          <option key={v.digest} value={v.digest}>
            v{v.version_index} · {v.digest.slice(0, 8)}
          </option>
        ))}
      </select>
    </label>
  );
  const d = diff.data?.diff;
  const total = d ? d.added + d.removed + d.changed : 0;
  const columns = d ? columnsOf(d.entries.flatMap((e) => [e.base_val, e.val])) : [];
  return (
    <Layout projectId={projectId} tab="objects">
      <div class="crumbs">
        <a href={projectHref(projectId, ['objects'])}>Objects</a> / <a href={projectHref(projectId, ['objects', objectId])}>{objectId}</a> /
        diff
      </div>
      <div class="diff-head">
        <h2>
          {objectId}: v{diff.data?.base.version_index ?? '…'} → v{diff.data?.next.version_index ?? '…'}
        </h2>
        {versions.data ? (
          <form class="diff-pick" onSubmit={(e) => e.preventDefault()}>
            {pick('base', diff.data?.base.digest ?? baseDigest, 'From')}
            {pick('v', diff.data?.next.digest ?? digest, 'to')}
          </form>
        ) : null}
      </div>
      {diff.loading ? <Loading what="the differences" /> : null}
      {diff.error ? <ErrorBox error={diff.error} /> : null}
      {d ? (
        <p class="diff-summary" data-added={d.added} data-removed={d.removed} data-changed={d.changed}>
          <span class="diff-count added">+{fmtInt(d.added)} added</span>{' '}
          <span class="diff-count removed">−{fmtInt(d.removed)} removed</span>{' '}
          <span class="diff-count changed">~{fmtInt(d.changed)} changed</span>{' '}
          <span class="muted">
            · {fmtInt(d.unchanged)} unchanged · {fmtInt(d.base_count)} → {fmtInt(d.count)} rows · rows are compared by their digest (their
            content); a row removed and one added at the same place are a change
          </span>
        </p>
      ) : null}
      {d && total === 0 ? <Empty title="The two versions have the same rows" /> : null}
      {d && d.entries.length ? (
        <table class="grid compact rows diff">
          <thead>
            <tr>
              <th />
              <th class="num" title="Row in the older version">
                from #
              </th>
              <th class="num" title="Row in the newer version">
                to #
              </th>
              {columns.map((c) => (
                <th key={c}>{c}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {d.entries.map((e) => (
              <tr
                key={`${e.kind}-${e.base_index}-${e.index}`}
                class={`diff-row ${e.kind}`}
                data-kind={e.kind}
                data-index={e.index ?? undefined}
              >
                <td>
                  <span class={`badge diff-${e.kind}`}>{e.kind}</span>
                </td>
                <td class="num">{e.base_index ?? ''}</td>
                <td class="num">{e.index ?? ''}</td>
                {columns.map((c) => {
                  const before = e.base_val?.[c];
                  const after = e.val?.[c];
                  if (e.kind === 'changed' && !same(before, after))
                    return (
                      <td key={c} class="cell-changed" data-column={c}>
                        <div class="before">
                          <Value v={before} />
                        </div>
                        <div class="after">
                          <Value v={after} />
                        </div>
                      </td>
                    );
                  return (
                    <td key={c} data-column={c}>
                      <Value v={e.kind === 'removed' ? before : after} />
                    </td>
                  );
                })}
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {d && total > DIFF_PAGE ? (
        <div class="pager">
          <button type="button" disabled={page === 0} onClick={() => set({ page: String(page - 1) })}>
            ← Previous
          </button>
          <span class="muted">
            differences {fmtInt(page * DIFF_PAGE + 1)}–{fmtInt(page * DIFF_PAGE + d.entries.length)} of {fmtInt(total)}
          </span>
          <button type="button" disabled={(page + 1) * DIFF_PAGE >= total} onClick={() => set({ page: String(page + 1) })}>
            Next →
          </button>
        </div>
      ) : null}
    </Layout>
  );
}
