import { microsToIso, nowMicros } from '@weft/core';
import type { Store } from '@weft/store';

/**
 * A project's settings (the project_settings table): named JSON values, each change a new
 * row, the latest kept: `retention_days` (a number, or null for "keep forever"), `pii_policy`
 * (`off` or `pii-v1`), `ingest_sampling` (`{sample_rate, dry_run}`).
 */
export type ProjectSettingName = 'retention_days' | 'pii_policy' | 'ingest_sampling';

export async function readProjectSetting(store: Store, projectId: string, name: ProjectSettingName): Promise<unknown> {
  const [row] = await store.rows<{ value_json: string }>(
    `SELECT value_json FROM project_settings FINAL WHERE project_id = {p:String} AND name = {n:String}`,
    { p: projectId, n: name },
    { name: 'project-settings.readProjectSetting' },
  );
  return row ? (JSON.parse(row.value_json) as unknown) : undefined;
}

export async function writeProjectSetting(
  store: Store,
  projectId: string,
  name: ProjectSettingName,
  value: unknown,
  by: string,
): Promise<void> {
  await store.insertRows(
    'project_settings',
    [{ project_id: projectId, name, value_json: JSON.stringify(value), updated_by: by, updated_at: microsToIso(nowMicros()) }],
    { name: 'project-settings.writeProjectSetting' },
  );
}

/** Every project that set `name`, with its value (the latest of each). */
export async function listProjectSetting(store: Store, name: ProjectSettingName): Promise<{ project_id: string; value: unknown }[]> {
  return (
    await store.rows<{ project_id: string; value_json: string }>(
      `SELECT project_id, value_json FROM project_settings FINAL WHERE name = {n:String}`,
      { n: name },
      { name: 'project-settings.listProjectSetting' },
    )
  ).map((r) => ({
    project_id: r.project_id,
    value: JSON.parse(r.value_json),
  }));
}

/** Every project's latest value of each setting in `names` (`statement`: the caller's statement name). */
export async function listProjectSettings(
  store: Store,
  names: readonly ProjectSettingName[],
  statement: string,
): Promise<{ project_id: string; name: ProjectSettingName; value: unknown }[]> {
  return (
    await store.rows<{ project_id: string; name: ProjectSettingName; value_json: string }>(
      `SELECT project_id, name, value_json FROM project_settings FINAL WHERE name IN ({names:Array(String)})`,
      { names },
      { name: statement },
    )
  ).map((r) => ({ project_id: r.project_id, name: r.name, value: JSON.parse(r.value_json) as unknown }));
}
