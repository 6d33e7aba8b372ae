import type { FastifyInstance } from 'fastify';
import { documentRoutes } from '@weft/http';
import { needs, type Role } from '@weft/runtime';
import { uiRoutes } from '@weft/svc-ui';
import { CallFacts } from './call-facts';
import { mcpRoutes } from './mcp';
import { queryRoutes } from './routes';
import { alertRoutes } from './alerts/routes';
import { AlertWorker } from './alerts/worker';
import { urlPolicyOf } from './alerts/url-guard';

/** Every read endpoint, answered from ClickHouse, and the web UI that talks to them. */
export const queryRole: Role = (config, log) => {
  let facts: CallFacts | undefined;
  const urlPolicy = urlPolicyOf(config.WEFT_ALERTS_ALLOW_PRIVATE_URLS);
  return {
    name: 'query',
    // Analytics facts (call-facts.ts, libs/query analytics/): block numbers are per shard, so not on a cluster.
    components(deps) {
      const parts = [];
      // Alerts (alerts/worker.ts): one process at a time evaluates them (a lease), so every query process may run one.
      if (config.WEFT_ALERTS_INTERVAL_MS > 0) {
        const reads = deps.readYourWrites;
        const alerts = new AlertWorker(deps.store, log, {
          intervalMs: config.WEFT_ALERTS_INTERVAL_MS,
          urlPolicy,
          ...(reads ? { caughtUp: () => reads.caughtUp() } : {}),
        });
        parts.push({ name: 'alerts', start: async () => alerts.start(), stop: () => alerts.stop() });
      }
      if (deps.store.cluster) return parts;
      const f = (facts = new CallFacts(deps.store, log, {
        intervalMs: config.WEFT_ANALYTICS_FACTS_INTERVAL_MS,
        settleMs: config.WEFT_ANALYTICS_FACTS_SETTLE_MS,
        graceMs: 600_000,
      }));
      if (config.WEFT_ANALYTICS_FACTS_INTERVAL_MS === 0) return parts;
      return [...parts, { name: 'analytics-facts', start: async () => f.start(), stop: () => f.stop() }];
    },
    async routes(app, deps) {
      const reads = deps.readYourWrites;
      await app.register(queryRoutes, {
        store: deps.store,
        ...(facts ? { facts } : {}),
        auth: needs(deps.auth, 'auth', 'query'),
        keys: needs(deps.keys, 'the key store', 'query'),
        pageRows: config.WEFT_QUERY_PAGE_ROWS,
        defaultRetentionDays: config.WEFT_RETENTION_DAYS,
        ...(reads ? { caughtUp: (projectId?: string) => reads.caughtUp(projectId) } : {}),
      });
      const auth = needs(deps.auth, 'auth', 'query');
      await app.register(alertRoutes, { store: deps.store, auth, urlPolicy });
      await app.register(mcpRoutes, { auth });
      await app.register(documentedUiRoutes);
    },
  };
};

/** The UI's pages and files, whichever it serves, under the `ui` group of /docs. */
async function documentedUiRoutes(app: FastifyInstance): Promise<void> {
  documentRoutes(app, (url) => ({ tag: 'ui', summary: url === '/' ? 'The web UI' : `The web UI: ${url}`, auth: 'none' }));
  await app.register(uiRoutes);
}
