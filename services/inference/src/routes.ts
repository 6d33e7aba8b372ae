import type { ResponseOf } from '@weft/api';
import type { FastifyInstance } from 'fastify';
import { weave054InferenceRoutes } from './weave054';
import type { Bus } from '@weft/bus';
import { delivery, type Logger } from '@weft/core';
import { addGuardedGet, addRoute, type Authenticator } from '@weft/http';
import type { Store } from '@weft/store';
import { CallIngest, ingestSettingsFor, type CallPartEnvelope } from '@weft/ingest';
import { chatCompletionKind } from './chat-completions';
import { CompletionFront } from './completion-front';
import { Completions } from './completions';
import { Actions } from './actions';
import { Embeddings } from './embeddings';
import { EvaluationRuns } from './evaluations';
import { JudgeRecorder } from './judge-model';
import { ModelList } from './model-list';
import { ModelRecords } from './models';
import { openAiError, toOpenAiError } from './openai-errors';
import { ResponsesFront } from './responses';
import { textCompletionKind } from './text-completions';
import type { UpstreamRegistry } from './upstreams';

export interface InferenceDeps {
  auth: Authenticator;
  /** Completions are recorded as calls through the bus, like any call. */
  bus: Bus<CallPartEnvelope>;
  /** Model records live in ClickHouse. */
  store: Store;
  /** Model servers, from WEFT_UPSTREAMS_FILE. */
  upstreams: UpstreamRegistry;
  log: Logger;
  /** Resolves once the writes acknowledged so far are stored: actions read the calls they run on. */
  caughtUp?: () => Promise<void>;
  /** Server-side evaluation runs' heartbeat (WEFT_EVALUATION_HEARTBEAT_MS). */
  evaluationHeartbeatMs: number;
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

/** The OpenAI-compatible front (chat and legacy completions, responses, embeddings, model list), project completions and model records. */
export async function inferenceRoutes(app: FastifyInstance, deps: InferenceDeps): Promise<void> {
  // Recorded completions truncate oversized values as every other call does (WEFT_MAX_VALUE_BYTES).
  // Redaction and sampling apply to recorded completions as to every call (read before the first is taken).
  const settings = ingestSettingsFor(deps.store, deps.log);
  await settings.ready();
  const ingest = new CallIngest(deps.bus, { maxValueBytes: app.weftLimits?.maxValueBytes, entrance: 'inference', settings });
  delivery.countsAccepted();
  const chat = new CompletionFront(chatCompletionKind, deps.upstreams, ingest, deps.log);
  const text = new CompletionFront(textCompletionKind, deps.upstreams, ingest, deps.log);
  const embeddings = new Embeddings(deps.upstreams, ingest);
  const responses = new ResponsesFront(deps.upstreams, ingest, deps.log);
  const modelList = new ModelList(deps.upstreams, deps.log);
  const completions = new Completions(deps.upstreams, ingest, deps.store);
  const models = new ModelRecords(deps.store);
  const judges = new JudgeRecorder(ingest);
  const actions = new Actions(deps.store, deps.upstreams, judges, deps.caughtUp);
  const evaluations = new EvaluationRuns(deps.store, deps.upstreams, ingest, deps.log, {
    heartbeatMs: deps.evaluationHeartbeatMs,
    ...(deps.caughtUp ? { caughtUp: deps.caughtUp } : {}),
  });
  // Heartbeats begin, and runs a stopped process left are taken up, once the server is ready.
  app.addHook('onReady', async () => evaluations.start());
  // Rows under way end before the bus closes (HTTP stops first); unfinished runs wait for the next start.
  app.addHook('onClose', () => evaluations.stop());
  for (const missing of deps.upstreams.missingKeys()) {
    deps.log.warn(missing, 'upstream API key variable is not set; its models will be refused');
  }

  // The OpenAI-compatible /v1 routes answer errors in vLLM's `{"error": {...}}` shape.
  const openAiShape = { mapError: toOpenAiError };
  // Routes whose requests are recorded as calls: their refusals are counted (delivery-counts.ts).
  const recorded = { ...openAiShape, entrance: 'inference' } as const;
  // The completion front answers the response schema's chat.completion (or streams it).
  addRoute(
    app,
    deps.auth,
    'chatCompletions',
    (body, ctx) => chat.handle(body, ctx) as Promise<ResponseOf<'chatCompletions'> | undefined>,
    recorded,
  );
  addRoute(app, deps.auth, 'textCompletions', (body, ctx) => text.handle(body, ctx), recorded);
  addRoute(app, deps.auth, 'embeddings', (body, ctx) => embeddings.handle(body, ctx), recorded);
  addRoute(app, deps.auth, 'responsesCreate', (body, ctx) => responses.handle(body, ctx), recorded);
  addGuardedGet(app, deps.auth, '/v1/models', 'bearer', () => modelList.list(), {
    ...openAiShape,
    doc: { tag: 'openai', summary: 'List the models the upstreams serve (OpenAI `GET /v1/models`)' },
  });
  addGuardedGet(app, deps.auth, '/v1/models/*', 'bearer', (params) => modelList.retrieve(params['*'] ?? ''), {
    ...openAiShape,
    doc: { tag: 'openai', summary: 'One model (OpenAI `GET /v1/models/{model}`)' },
  });
  addRoute(app, deps.auth, 'completionsCreate', (body, ctx) => completions.create(body, ctx), { entrance: 'inference' });
  addRoute(app, deps.auth, 'completionsCreateStream', (body, ctx) => completions.createStream(body, ctx), { entrance: 'inference' });
  addRoute(app, deps.auth, 'modelCreate', (body, { caller }) => models.create(body, caller), openAiShape);
  addRoute(app, deps.auth, 'actionsExecuteBatch', (body, { caller }) => actions.executeBatch(body, caller.userId));
  addRoute(app, deps.auth, 'evaluationsEvaluateModel', (body, { caller }) => evaluations.evaluateModel(body, caller));
  addRoute(app, deps.auth, 'evaluationsStatus', (body) => evaluations.status(body));
  addRoute(app, deps.auth, 'evaluationsCancel', (body, { caller }) => evaluations.cancel(body, caller));
  addRoute(app, deps.auth, 'evaluationsReplay', (body, { caller }) => evaluations.replay(body, caller));
  await weave054InferenceRoutes(app, {
    store: deps.store,
    auth: deps.auth,
    upstreams: deps.upstreams,
    judges,
    ...(deps.caughtUp ? { caughtUp: deps.caughtUp } : {}),
  });

  // Anything else under /v1 answers in the same shape: 405 for a known path, 404 otherwise.
  await app.register(
    async (v1) => {
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
    },
    { prefix: '/v1' },
  );
}
