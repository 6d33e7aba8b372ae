import type { FastifyInstance } from 'fastify';
import type { Bus } from '@weft/bus';
import { delivery, type Logger } from '@weft/core';
import type { Authenticator } from '@weft/http';
import type { Store } from '@weft/store';
import { CallIngest, ingestSettingsFor, type CallPartEnvelope } from '@weft/ingest';
import { Actions } from './actions';
import { completionRoutes } from './completion-routes';
import { evaluationRoutes } from './evaluation-routes';
import { EvaluationRuns } from './evaluations';
import { JudgeRecorder } from './judge-model';
import { openAiRoutes } from './openai-routes';
import type { UpstreamRegistry } from './upstreams';
import { weave054InferenceRoutes } from './weave054';

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

/**
 * The OpenAI-compatible front (chat and legacy completions, responses, embeddings, model list),
 * project completions, model records, actions and server-side evaluations. What the groups share
 * (the recorded calls' ingest, the judges, the evaluation runs) is built here; each route group
 * is a plugin of its own, registered with what it needs.
 */
export async function inferenceRoutes(app: FastifyInstance, deps: InferenceDeps): Promise<void> {
  const { auth, store, upstreams, log } = deps;
  // Recorded completions truncate oversized values as every other call does (WEFT_MAX_VALUE_BYTES).
  // Redaction and sampling apply to recorded completions as to every call (read before the first is taken).
  const settings = ingestSettingsFor(store, log);
  await settings.ready();
  const ingest = new CallIngest(deps.bus, { maxValueBytes: app.weftLimits?.maxValueBytes, entrance: 'inference', settings });
  delivery.countsAccepted();
  const judges = new JudgeRecorder(ingest);
  const actions = new Actions(store, upstreams, judges, deps.caughtUp);
  const afterWrites = deps.caughtUp ? { caughtUp: deps.caughtUp } : {};
  const evaluations = new EvaluationRuns(store, upstreams, ingest, log, { heartbeatMs: deps.evaluationHeartbeatMs, ...afterWrites });
  // Heartbeats begin, and runs a stopped process left are taken up, once the server is ready.
  app.addHook('onReady', async () => evaluations.start());
  // Rows under way end before the bus closes (HTTP stops first); unfinished runs wait for the next start.
  app.addHook('onClose', () => evaluations.stop());
  for (const missing of upstreams.missingKeys()) {
    log.warn(missing, 'upstream API key variable is not set; its models will be refused');
  }

  await app.register(openAiRoutes, { auth, upstreams, ingest, store, log });
  await app.register(completionRoutes, { auth, upstreams, ingest, store });
  await app.register(evaluationRoutes, { auth, evaluations, actions });
  await app.register(weave054InferenceRoutes, { store, auth, upstreams, judges, ...afterWrites });
}
