import type { FastifyInstance } from 'fastify';
import type { Bus } from '@weft/bus';
import type { Logger } from '@weft/core';
import { addRoute, type Authenticator } from '@weft/http';
import type { Store } from '@weft/store';
import { CallIngest, type CallPartEnvelope } from '@weft/ingest';
import { ChatCompletions } from './chat-completions';
import { Completions } from './completions';
import { ModelRecords } from './models';
import { toOpenAiError } from './openai-errors';
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
}

/** Chat completions front, project completions and model records. */
export async function inferenceRoutes(app: FastifyInstance, deps: InferenceDeps): Promise<void> {
  const ingest = new CallIngest(deps.bus);
  const chat = new ChatCompletions(deps.upstreams, ingest, deps.log);
  const completions = new Completions(deps.upstreams, ingest);
  const models = new ModelRecords(deps.store.client);
  for (const missing of deps.upstreams.missingKeys()) {
    deps.log.warn(missing, 'upstream API key variable is not set; its models will be refused');
  }

  // The OpenAI-compatible /v1 routes answer errors in vLLM's `{"error": {...}}` shape.
  const openAiShape = { mapError: toOpenAiError };
  addRoute(app, deps.auth, 'chatCompletions', (body, ctx) => chat.handle(body, ctx), ['/v1/chat/completions'], openAiShape);
  addRoute(app, deps.auth, 'completionsCreate', (body, ctx) => completions.create(body, ctx));
  addRoute(app, deps.auth, 'completionsCreateStream', (body, ctx) => completions.createStream(body, ctx));
  addRoute(app, deps.auth, 'modelCreate', (body, { caller }) => models.create(body, caller), [], openAiShape);
}
