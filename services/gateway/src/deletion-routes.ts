import type { FastifyInstance } from 'fastify';
import { forbidden, type Logger } from '@weft/core';
import { addRoute, type Authenticator } from '@weft/http';
import type { Store } from '@weft/store';
import { DeletionJobs } from './deletion-jobs';

export interface DeletionRouteDeps {
  auth: Authenticator;
  store: Store;
  /** Resolves once the writes acknowledged so far are stored, however long that takes: they are deleted too. */
  caughtUp?: () => Promise<void>;
}

/**
 * Deletions that delete (deletion-jobs.ts). A project's: admins and members of its entity (the
 * tenancy check of addRoute); a data subject's calls span entities: admin keys only.
 */
export async function deletionRoutes(app: FastifyInstance, deps: DeletionRouteDeps): Promise<void> {
  const { auth } = deps;
  const deletions = new DeletionJobs(deps.store, app.log as Logger, deps.caughtUp);
  addRoute(app, auth, 'projectDelete', async (body, { caller }) => deletions.create('project', body.project_id, caller));
  addRoute(app, auth, 'userDataDelete', async (body, { caller }) => {
    if (!caller.isAdmin) throw forbidden("deleting a user's data needs an admin key");
    return deletions.create('user', body.svc_user_id, caller);
  });
  addRoute(app, auth, 'deletionStatus', async (body, { caller }) => deletions.status(body.job_id, caller));
}
