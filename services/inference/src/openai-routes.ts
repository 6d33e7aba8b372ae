import type { FastifyInstance } from 'fastify';
import type { ResponseOf } from '@weft/api';
import type { Logger } from '@weft/core';
import { addGuardedGet, addRoute, type Authenticator } from '@weft/http';
import type { CallIngest } from '@weft/ingest';
import type { Store } from '@weft/store';
import { chatCompletionKind } from './chat-completions';
import { CompletionFront } from './completion-front';
import { Embeddings } from './embeddings';
import { ModelList } from './model-list';
import { ModelRecords } from './models';
import { openAiError, toOpenAiError } from './openai-errors';
import { ResponsesFront } from './responses';
import { textCompletionKind } from './text-completions';
import type { UpstreamRegistry } from './upstreams';

export interface OpenAiRouteDeps {
  auth: Authenticator;
  /** Model servers, from WEFT_UPSTREAMS_FILE. */
  upstreams: UpstreamRegistry;
  /** The inference entrance's ingest: every completion is recorded as a call. */
  ingest: CallIngest;
  /** Model records live in ClickHouse. */
  store: Store;
  log: Logger;
}

/** The `/v1` routes and their methods, for the 404/405 answers of everything else under `/v1`. */
const V1_ROUTES: { method: string; path: RegExp }[] = [
  { method: 'POST', path: /^\/v1\/chat\/completions\/?$/ },
  { method: 'POST', path: /^\/v1\/completions$/ },
  { method: 'POST', path: /^\/v1\/embeddings$/ },
  { method: 'POST', path: /^\/v1\/responses$/ },
  { method: 'POST', path: /^\/v1\/preview\/models$/ },
  { method: 'GET', path: /^\/v1\/models$/ },
  { method: 'GET', path: /^\/v1\/models\/.+$/ },
];

/**
 * The OpenAI-compatible front under `/v1`: chat and legacy completions, responses, embeddings,
 * the model list, model records; anything else under `/v1` answers 404 or 405 in the same shape.
 */
export async function openAiRoutes(app: FastifyInstance, deps: OpenAiRouteDeps): Promise<void> {
  const { auth, upstreams, ingest, log } = deps;
  const chat = new CompletionFront(chatCompletionKind, upstreams, ingest, log);
  const text = new CompletionFront(textCompletionKind, upstreams, ingest, log);
  const embeddings = new Embeddings(upstreams, ingest);
  const responses = new ResponsesFront(upstreams, ingest, log);
  const modelList = new ModelList(upstreams, log);
  const models = new ModelRecords(deps.store);

  // The OpenAI-compatible /v1 routes answer errors in vLLM's `{"error": {...}}` shape.
  const openAiShape = { mapError: toOpenAiError };
  // Routes whose requests are recorded as calls: their refusals are counted (delivery-counts.ts).
  const recorded = { ...openAiShape, entrance: 'inference' } as const;
  // The completion front answers the response schema's chat.completion (or streams it).
  addRoute(
    app,
    auth,
    'chatCompletions',
    (body, ctx) => chat.handle(body, ctx) as Promise<ResponseOf<'chatCompletions'> | undefined>,
    recorded,
  );
  addRoute(app, auth, 'textCompletions', (body, ctx) => text.handle(body, ctx), recorded);
  addRoute(app, auth, 'embeddings', (body, ctx) => embeddings.handle(body, ctx), recorded);
  addRoute(app, auth, 'responsesCreate', (body, ctx) => responses.handle(body, ctx), recorded);
  addGuardedGet(app, auth, '/v1/models', 'bearer', () => modelList.list(), {
    ...openAiShape,
    doc: { tag: 'openai', summary: 'List the models the upstreams serve (OpenAI `GET /v1/models`)' },
  });
  addGuardedGet(app, auth, '/v1/models/*', 'bearer', (params) => modelList.retrieve(params['*'] ?? ''), {
    ...openAiShape,
    doc: { tag: 'openai', summary: 'One model (OpenAI `GET /v1/models/{model}`)' },
  });
  addRoute(app, auth, 'modelCreate', (body, { caller }) => models.create(body, caller), openAiShape);

  // Anything else under /v1 answers in the same shape: 405 for a known path, 404 otherwise.
  await app.register(v1Fallback, { prefix: '/v1' });
}

/** Under `/v1`, what no route takes: 405 for a known path (with Allow), 404 otherwise. */
async function v1Fallback(v1: FastifyInstance): Promise<void> {
  // The body of a request no route takes is never read (a DELETE with an empty JSON body is still a 405).
  v1.removeAllContentTypeParsers();
  v1.addContentTypeParser('*', (_request, _payload, done) => done(null));
  v1.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!;
    const allowed = V1_ROUTES.filter((r) => r.path.test(path)).map((r) => r.method);
    const err =
      allowed.length > 0
        ? openAiError(405, `Method Not Allowed: ${request.method} ${path} (allowed: ${allowed.join(', ')})`, {
            headers: { Allow: allowed.join(', ') },
          })
        : openAiError(404, `Not Found: ${request.method} ${path}`);
    reply
      .code(err.status)
      .headers(err.headers ?? {})
      .type('application/json')
      .send(err.toBody());
  });
}
