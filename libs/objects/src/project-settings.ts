import { microsToIso, nowMicros } from '@weft/core';
import type { Store } from '@weft/store';

/**
 * A project's settings (the project_settings table): named JSON values, each change a new
 * row, the latest kept: `retention_days` (a number, or null for "keep forever"), `pii_policy`
 * (`off` or `pii-v1`), `ingest_sampling` (`{sample_rate, dry_run}`).
 */
export type ProjectSettingName = 'retention_days' | 'pii_policy' | 'ingest_sampling';

export async function readProjectSetting(store: Store, projectId: string, name: ProjectSettingName): Promise<unknown> {
  const rs = await store.client.query({
    query: `SELECT value_json FROM project_settings FINAL WHERE project_id = {p:String} AND name = {n:String}`,
    query_params: { p: projectId, n: name },
    format: 'JSONEachRow',
  });
  const [row] = await rs.json<{ value_json: string }>();
  return row ? (JSON.parse(row.value_json) as unknown) : undefined;
}

export async function writeProjectSetting(
  store: Store,
  projectId: string,
  name: ProjectSettingName,
  value: unknown,
  by: string,
): Promise<void> {
  await store.client.insert({
    table: 'project_settings',
    values: [{ project_id: projectId, name, value_json: JSON.stringify(value), updated_by: by, updated_at: microsToIso(nowMicros()) }],
    format: 'JSONEachRow',
  });
}

/** Every project that set `name`, with its value (the latest of each). */
export async function listProjectSetting(store: Store, name: ProjectSettingName): Promise<{ project_id: string; value: unknown }[]> {
  const rs = await store.client.query({
    query: `SELECT project_id, value_json FROM project_settings FINAL WHERE name = {n:String}`,
    query_params: { n: name },
    format: 'JSONEachRow',
  });
  return (await rs.json<{ project_id: string; value_json: string }>()).map((r) => ({
    project_id: r.project_id,
    value: JSON.parse(r.value_json),
  }));
}
