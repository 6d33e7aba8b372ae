import { post } from '../api';
import { Layout } from '../components/layout';
import { Empty, ErrorBox, Loading } from '../components/states';
import { fmtAgo, fmtInt, fmtTime } from '../format';
import { projectHref } from '../route';
import type { ProjectSummary } from '../types';
import { useAsync } from '../use-async';

/** The projects the key can see, most recently active first. */
export function Projects() {
  const { data, error, loading } = useAsync((signal) => post<{ projects: ProjectSummary[] }>('/projects/list', {}, signal), []);
  return (
    <Layout>
      <h2>Projects</h2>
      {loading ? <Loading what="projects" /> : null}
      {error ? <ErrorBox error={error} /> : null}
      {data && data.projects.length === 0 ? (
        <Empty title="No projects yet">
          <p>
            A project appears once something is written to it. Send a call with your key, e.g. <code>POST /call/start</code> with{' '}
            <code>
              {'{"start": {"project_id": "<entity>/<project>", "op_name": "hello", "started_at": "…", "inputs": {}, "attributes": {}}}'}
            </code>
            , or point an OpenTelemetry exporter at <code>/otel/v1/traces</code>.
          </p>
        </Empty>
      ) : null}
      {data && data.projects.length > 0 ? (
        <table class="grid projects">
          <thead>
            <tr>
              <th>Project</th>
              <th class="num">Calls</th>
              <th class="num">Object versions</th>
              <th>Last activity</th>
            </tr>
          </thead>
          <tbody>
            {data.projects.map((p) => (
              <tr key={p.project_id}>
                <td>
                  <a class="project-link" href={projectHref(p.project_id, ['calls'])}>
                    {p.project_id}
                  </a>
                </td>
                <td class="num">{fmtInt(p.call_count)}</td>
                <td class="num">{fmtInt(p.object_count)}</td>
                <td title={fmtTime(p.last_activity)}>{fmtAgo(p.last_activity)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </Layout>
  );
}
