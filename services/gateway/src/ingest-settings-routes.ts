import type { FastifyInstance } from 'fastify';
import { readProjectSetting, writeProjectSetting } from '@weft/objects';
import { addRoute, type Authenticator } from '@weft/http';
import { INGEST_SAMPLING_SETTING, isPiiPolicy, PII_POLICY_SETTING, type IngestSettings, type SamplingSetting } from '@weft/ingest';
import type { Store } from '@weft/store';

const KEEP_ALL: SamplingSetting = { sample_rate: 1, dry_run: false };

export interface IngestSettingsRouteDeps {
  auth: Authenticator;
  store: Store;
  /** The process's reader of the policies, refreshed at once on an update. */
  settings: IngestSettings;
}

/**
 * A project's ingest policies through Weave's endpoints (`GET /project/sensitive_data_settings`,
 * `/project/ingest_sampling_settings/read`) and weft's updates of them: kept in project_settings,
 * applied by this process at once (the others within INGEST_SETTINGS_REFRESH_MS), to new calls.
 */
export async function ingestSettingsRoutes(app: FastifyInstance, deps: IngestSettingsRouteDeps): Promise<void> {
  const { auth, store, settings } = deps;
  addRoute(app, auth, 'sensitiveDataSettingsRead', async (body) => {
    const policy = await readProjectSetting(store, body.project_id, PII_POLICY_SETTING);
    return { policy: isPiiPolicy(policy) ? policy : 'off' };
  });
  addRoute(app, auth, 'sensitiveDataSettingsUpdate', async (body, { caller }) => {
    await writeProjectSetting(store, body.project_id, PII_POLICY_SETTING, body.policy, caller.userId);
    await settings.refresh();
    return { policy: body.policy };
  });
  addRoute(app, auth, 'ingestSamplingSettingsRead', async (body) => {
    const value = (await readProjectSetting(store, body.project_id, INGEST_SAMPLING_SETTING)) as SamplingSetting | undefined;
    return value ? { sample_rate: value.sample_rate, dry_run: value.dry_run } : KEEP_ALL;
  });
  addRoute(app, auth, 'ingestSamplingSettingsUpdate', async (body, { caller }) => {
    const value: SamplingSetting = { sample_rate: body.sample_rate, dry_run: body.dry_run };
    await writeProjectSetting(store, body.project_id, INGEST_SAMPLING_SETTING, value, caller.userId);
    await settings.refresh();
    return value;
  });
}
