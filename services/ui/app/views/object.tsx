import { post } from '../api';
import { JsonView } from '../components/json-view';
import { Layout } from '../components/layout';
import { Empty, ErrorBox, Loading } from '../components/states';
import { fmtTime } from '../format';
import { objectVersions } from '../objects';
import { findRefs, parseRef, refHref } from '../refs';
import { navigate, projectHref, type Route } from '../route';
import type { ObjectVersion } from '../types';
import { useAsync } from '../use-async';
import { TableRows } from './table';

/** One object: its versions, the chosen version's value, a dataset's rows, and the calls that used it. */
export function ObjectView({ projectId, objectId, route }: { projectId: string; objectId: string; route: Route }) {
  const versions = useAsync((signal) => objectVersions(projectId, objectId, signal), [projectId, objectId]);
  const wanted = route.params.get('v') ?? 'latest';
  const version = useAsync(
    (signal) => post<{ obj: ObjectVersion }>('/obj/read', { project_id: projectId, object_id: objectId, digest: wanted }, signal),
    [projectId, objectId, wanted],
  );
  const obj = version.data?.obj;
  const ref = obj ? `weave:///${projectId}/${obj.kind === 'op' ? 'op' : 'object'}/${objectId}:${obj.digest}` : null;
  const val = obj?.val as Record<string, unknown> | undefined;
  const tableRef = val && typeof val.rows === 'string' ? parseRef(val.rows) : null;
  const isDataset = obj?.base_object_class === 'Dataset' && tableRef?.kind === 'table';
  const others = (versions.data?.objs ?? []).filter((v) => v.digest !== obj?.digest);
  const otherRefs = val ? findRefs(val).filter((r) => r !== val.rows) : [];
  return (
    <Layout projectId={projectId} tab="objects">
      <div class="crumbs">
        <a href={projectHref(projectId, ['objects'])}>Objects</a> / <code>{objectId}</code>
      </div>
      <div class="object-page">
        <aside class="versions">
          <h3>Versions</h3>
          {versions.loading ? <Loading what="versions" /> : null}
          {versions.error ? <ErrorBox error={versions.error} /> : null}
          <ol class="version-list">
            {versions.data?.objs.map((v) => (
              <li key={v.digest}>
                <a
                  href={projectHref(projectId, ['objects', objectId], { v: v.digest })}
                  class={obj?.digest === v.digest ? 'active' : ''}
                  aria-current={obj?.digest === v.digest ? 'true' : undefined}
                >
                  <strong>v{v.version_index}</strong> {v.is_latest ? <span class="badge status-success">latest</span> : null}
                  <div class="muted">
                    {fmtTime(v.created_at)} · <code>{v.digest.slice(0, 10)}</code>
                  </div>
                </a>
              </li>
            ))}
          </ol>
        </aside>
        <section class="object-main">
          {version.loading ? <Loading what="object" /> : null}
          {version.error ? <ErrorBox error={version.error} /> : null}
          {obj ? (
            <>
              <div class="object-head">
                <h2>
                  {objectId} <span class="muted">v{obj.version_index}</span>
                </h2>
                <span class="muted">{obj.base_object_class ?? obj.kind}</span>
                <span class="spacer" />
                {isDataset && others.length ? (
                  <select
                    aria-label="Compare with version"
                    value=""
                    onChange={(e) => {
                      const base = (e.target as HTMLSelectElement).value;
                      if (base) navigate(projectHref(projectId, ['objects', objectId, 'diff'], { base, v: obj.digest }));
                    }}
                  >
                    <option value="">Compare with…</option>
                    {others.map((v) => (
                      <option key={v.digest} value={v.digest}>
                        v{v.version_index} · {v.digest.slice(0, 8)}
                      </option>
                    ))}
                  </select>
                ) : null}
                {obj.kind === 'op' ? (
                  <a href={projectHref(projectId, ['calls'], { op: ref! })} class="button-link">
                    Calls of this version →
                  </a>
                ) : (
                  <a href={projectHref(projectId, ['calls'], { ref: ref! })} class="button-link">
                    Calls using this version →
                  </a>
                )}
              </div>
              <dl class="facts">
                <dt>Ref</dt>
                <dd>
                  <code>{ref}</code>
                </dd>
                <dt>Created</dt>
                <dd>{fmtTime(obj.created_at)}</dd>
              </dl>
              {tableRef ? (
                <div class="dataset">
                  <h3>Rows</h3>
                  {isDataset && !obj.is_latest ? (
                    <p class="muted">This is an older version: saved edits make the dataset's next version from these rows.</p>
                  ) : null}
                  <TableRows
                    key={tableRef.digest}
                    projectId={projectId}
                    digest={tableRef.digest}
                    route={route}
                    dataset={isDataset ? obj : undefined}
                  />
                </div>
              ) : null}
              <h3>Value</h3>
              <div class="value-box">
                <JsonView value={obj.val} />
              </div>
              {otherRefs.length ? (
                <>
                  <h3>References</h3>
                  <ul class="refs">
                    {otherRefs.map((r) => (
                      <li key={r}>
                        <a href={refHref(parseRef(r)!)}>
                          <code>{r}</code>
                        </a>
                      </li>
                    ))}
                  </ul>
                </>
              ) : null}
            </>
          ) : null}
          {versions.data && versions.data.objs.length === 0 && !obj ? (
            <Empty title="No such object">
              <p>
                Nothing named <code>{objectId}</code> in {projectId}.
              </p>
            </Empty>
          ) : null}
        </section>
      </div>
    </Layout>
  );
}
