import { needs, type Role } from '@weft/runtime';
import { loadUpstreams } from './upstreams';
import { inferenceRoutes } from './routes';

/**
 * Chat completions, project completions and model records. Completions are traced as calls
 * through the bus; model records live in the store.
 */
export const inferenceRole: Role = (config, log) => {
  // Read before anything is opened: a bad upstreams file stops the start at once.
  const upstreams = loadUpstreams(config.WEFT_UPSTREAMS_FILE, { defaultTimeoutMs: config.WEFT_UPSTREAM_TIMEOUT_MS });
  return {
    name: 'inference',
    usesBus: true,
    async routes(app, deps) {
      await app.register(inferenceRoutes, {
        auth: needs(deps.auth, 'auth', 'inference'),
        bus: needs(deps.bus, 'the bus', 'inference'),
        store: deps.store,
        upstreams,
        log,
        ...(deps.bus?.caughtUp ? { caughtUp: () => deps.bus!.caughtUp!() } : {}),
      });
    },
  };
};
