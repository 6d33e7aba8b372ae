import type { FastifyInstance } from 'fastify';
import { addRoute, type Authenticator } from '@weft/http';
import type { Actions } from './actions';
import type { EvaluationRuns } from './evaluations';

export interface EvaluationRouteDeps {
  auth: Authenticator;
  /** Server-side evaluation runs (started and stopped with the process by the inference routes). */
  evaluations: EvaluationRuns;
  /** ActionSpecs run on calls (their results stored as feedback). */
  actions: Actions;
}

/** What runs scorers and models on the server: ActionSpecs on calls, server-side evaluations (run, status, cancel, replay). */
export async function evaluationRoutes(app: FastifyInstance, deps: EvaluationRouteDeps): Promise<void> {
  const { auth, evaluations, actions } = deps;
  addRoute(app, auth, 'actionsExecuteBatch', (body, { caller }) => actions.executeBatch(body, caller.userId));
  addRoute(app, auth, 'evaluationsEvaluateModel', (body, { caller }) => evaluations.evaluateModel(body, caller));
  addRoute(app, auth, 'evaluationsStatus', (body) => evaluations.status(body));
  addRoute(app, auth, 'evaluationsCancel', (body, { caller }) => evaluations.cancel(body, caller));
  addRoute(app, auth, 'evaluationsReplay', (body, { caller }) => evaluations.replay(body, caller));
}
