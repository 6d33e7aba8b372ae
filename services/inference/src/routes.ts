import type { FastifyInstance } from 'fastify';
import { addRoute, notYet, type Authenticator } from '@weft/http';

export interface InferenceDeps {
  auth: Authenticator;
}

/** Chat completions front, project completions and model records. */
export async function inferenceRoutes(app: FastifyInstance, deps: InferenceDeps): Promise<void> {
  addRoute(app, deps.auth, 'chatCompletions', notYet('chat completions (/v1/chat/completions/)'), ['/v1/chat/completions']);
  addRoute(app, deps.auth, 'completionsCreate', notYet('project completions (/completions/create)'));
  addRoute(app, deps.auth, 'completionsCreateStream', notYet('project completions (/completions/create_stream)'));
  addRoute(app, deps.auth, 'modelCreate', notYet('model records (/v1/preview/models)'));
}
