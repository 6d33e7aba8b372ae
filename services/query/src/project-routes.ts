import type { FastifyInstance } from 'fastify';
import { addRoute, type Authenticator } from '@weft/http';
import type { Store } from '@weft/store';
import { readTtlSettings, updateTtlSettings } from './project-settings';

/** Users' names (libs/auth's KeyStore). */
export interface UserNames {
  userNamesIn(entity: string, userIds: string[], callerId: string): Promise<{ user_id: string; name: string }[]>;
}

export interface ProjectRouteDeps {
  store: Store;
  auth: Authenticator;
  keys: UserNames;
  /** Days kept in projects with no retention of their own (WEFT_RETENTION_DAYS). */
  defaultRetentionDays?: number;
}

/** A project's retention, and the names of its entity's users. */
export async function projectRoutes(app: FastifyInstance, deps: ProjectRouteDeps): Promise<void> {
  const { store, auth } = deps;
  addRoute(app, auth, 'ttlSettingsRead', async (body) => readTtlSettings(store, body.project_id, deps.defaultRetentionDays));
  addRoute(app, auth, 'ttlSettingsUpdate', async (body, { caller }) => updateTtlSettings(store, body, caller.userId));
  addRoute(app, auth, 'usersReadBatch', async (body, { caller }) => ({
    users: await deps.keys.userNamesIn(body.project_id.split('/')[0]!, body.user_ids, caller.userId),
  }));
}
