import { post } from '../api';
import { Layout } from '../components/layout';
import { LinkRow } from '../components/link-row';
import { Empty, ErrorBox, Loading } from '../components/states';
import { fmtAgo, fmtTime } from '../format';
import { projectHref } from '../route';
import type { ObjectVersion } from '../types';
import { useAsync } from '../use-async';

const OBJECTS_LIMIT = 1000;

/** The latest version of every object and op of a project, newest first (/objs/query). */
export function ObjectsView({ projectId }: { projectId: string }) {
  const { data, error, loading } = useAsync(
    (signal) =>
      post<{ objs: ObjectVersion[] }>(
        '/objs/query',
        {
          project_id: projectId,
          filter: { latest_only: true },
          metadata_only: true,
          sort_by: [{ field: 'created_at', direction: 'desc' }],
          limit: OBJECTS_LIMIT,
        },
        signal,
      ),
    [projectId],
  );
  const objs = data?.objs;
  return (
    <Layout projectId={projectId} tab="objects">
      <h2>Objects and datasets</h2>
      {loading ? <Loading what="objects" /> : null}
      {error ? <ErrorBox error={error} /> : null}
      {objs && objs.length === 0 ? (
        <Empty title="No objects yet">
          <p>
            Publish one with <code>POST /obj/create</code>{' '}
            <code>{'{"obj": {"project_id": …, "object_id": "my-dataset", "val": {…}}}'}</code>; a dataset is an object whose{' '}
            <code>rows</code> is a table ref made with <code>/table/create</code> (the Weave SDK's <code>weave.publish(Dataset(…))</code>{' '}
            does both).
          </p>
        </Empty>
      ) : null}
      {objs && objs.length > 0 ? (
        <table class="grid objects">
          <thead>
            <tr>
              <th>Name</th>
              <th>Kind</th>
              <th>Class</th>
              <th class="num">Versions</th>
              <th>Latest</th>
            </tr>
          </thead>
          <tbody>
            {objs.map((o) => {
              const to = projectHref(projectId, ['objects', o.object_id]);
              return (
                <LinkRow key={`${o.kind}/${o.object_id}`} to={to}>
                  <td>
                    <a href={to}>
                      <code>{o.object_id}</code>
                    </a>
                  </td>
                  <td>{o.kind}</td>
                  <td>{o.base_object_class ?? <span class="muted">—</span>}</td>
                  <td class="num">{o.version_index + 1}</td>
                  <td title={fmtTime(o.created_at)}>{fmtAgo(o.created_at)}</td>
                </LinkRow>
              );
            })}
          </tbody>
        </table>
      ) : null}
    </Layout>
  );
}
