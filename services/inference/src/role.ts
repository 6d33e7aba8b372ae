import { needs, type Role } from '@weft/runtime';
import { CallIngest } from '@weft/ingest';
import { JudgeRecorder } from './judge-model';
import { MonitorWorker } from './monitors';
import { loadUpstreams } from './upstreams';
import { inferenceRoutes } from './routes';

/**
 * Chat completions, project completions and model records. Completions are traced as calls
 * through the bus; model records live in the store. Active Weave Monitors are scored here.
 */
export const inferenceRole: Role = (config, log) => {
  // Read before anything is opened: a bad upstreams file stops the start at once.
  const upstreams = loadUpstreams(config.WEFT_UPSTREAMS_FILE, { defaultTimeoutMs: config.WEFT_UPSTREAM_TIMEOUT_MS });
  return {
    name: 'inference',
    usesBus: true,
    // Weave Monitors are scored where the judges' model servers are (the upstreams).
    components(deps) {
      if (config.WEFT_MONITORS_INTERVAL_MS === 0) return [];
      const bus = deps.bus;
      const worker = new MonitorWorker(deps.store, upstreams, log, {
        intervalMs: config.WEFT_MONITORS_INTERVAL_MS,
        batchCalls: 500,
        ...(bus ? { judges: new JudgeRecorder(new CallIngest(bus, { maxValueBytes: config.WEFT_MAX_VALUE_BYTES })) } : {}),
        ...(deps.readYourWrites ? { caughtUp: () => deps.readYourWrites!.caughtUp() } : {}),
      });
      return [{ name: 'monitors', start: async () => worker.start(), stop: () => worker.stop() }];
    },
    async routes(app, deps) {
      await app.register(inferenceRoutes, {
        auth: needs(deps.auth, 'auth', 'inference'),
        bus: needs(deps.bus, 'the bus', 'inference'),
        store: deps.store,
        upstreams,
        log,
        evaluationHeartbeatMs: config.WEFT_EVALUATION_HEARTBEAT_MS,
        ...(deps.readYourWrites ? { caughtUp: () => deps.readYourWrites!.caughtUp() } : {}),
      });
    },
  };
};
