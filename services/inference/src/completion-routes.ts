import type { FastifyInstance } from 'fastify';
import { addRoute, type Authenticator } from '@weft/http';
import type { CallIngest } from '@weft/ingest';
import type { Store } from '@weft/store';
import { Completions } from './completions';
import type { UpstreamRegistry } from './upstreams';

export interface CompletionRouteDeps {
  auth: Authenticator;
  upstreams: UpstreamRegistry;
  /** The inference entrance's ingest: every completion is recorded as a call. */
  ingest: CallIngest;
  store: Store;
}

/** The interface's project-scoped completions (one answer, or streamed as JSONL). */
export async function completionRoutes(app: FastifyInstance, deps: CompletionRouteDeps): Promise<void> {
  const completions = new Completions(deps.upstreams, deps.ingest, deps.store);
  addRoute(app, deps.auth, 'completionsCreate', (body, ctx) => completions.create(body, ctx), { entrance: 'inference' });
  addRoute(app, deps.auth, 'completionsCreateStream', (body, ctx) => completions.createStream(body, ctx), { entrance: 'inference' });
}
