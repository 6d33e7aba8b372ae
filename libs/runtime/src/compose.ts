import type { FastifyInstance } from 'fastify';
import { setupAuth } from '@weft/auth';
import { createTransport } from '@weft/bus';
import { callPartCodec } from '@weft/ingest';
import type { Component, Config, Logger } from '@weft/core';
import { createHttpServer, requestLimitsFromConfig } from '@weft/http';
import type { Store } from '@weft/store';
import { busComponent } from './bus';
import type { Role, RoleDeps, RoleName } from './role';
import { StoreComponent } from './store';

export interface RegisteredRoute {
  method: string;
  url: string;
  role: RoleName;
}

/** A composed process: its HTTP app (not yet listening), its store and its running components. */
export interface Weft {
  app: FastifyInstance;
  store: Store;
  roles: RoleName[];
  /** Every route the roles registered (not the shell's /health, /ready, /metrics, /docs…), by role. */
  routes: readonly RegisteredRoute[];
  /** The admin key this start created (an empty store, no WEFT_BOOTSTRAP_API_KEY): printed once more when listening. */
  firstKey?: { key: string; key_id: string };
  /** In start order: store, bus (if any role uses it), then the roles' own. */
  components: readonly Component[];
  /** Stops taking requests, then stops the components in reverse order (the writer commits what it inserted). */
  close(): Promise<void>;
}

/**
 * The one composition root: builds any process, the all-in-one or a single service, from its
 * roles. Shared components are made once and only when a role needs them; /health and /ready
 * are the same everywhere (ready = every component's probe answers).
 */
export async function compose(config: Config, log: Logger, roles: readonly Role[]): Promise<Weft> {
  const plans = roles.map((role) => role(config, log));
  const started: Component[] = [];
  const start = async (c: Component) => {
    await c.start?.();
    started.push(c);
  };
  const stopAll = async () => {
    for (const c of [...started].reverse()) await c.stop?.();
  };
  try {
    const store = new StoreComponent(config, log);
    await start(store);
    const transport = plans.some((p) => p.usesBus) ? createTransport(config, log, callPartCodec) : undefined;
    const bus = transport?.bus;
    if (bus) await start(busComponent(bus));
    const serves = plans.some((p) => p.routes);
    const access = serves ? await setupAuth(store.store, config, log, { createFirstKey: plans.some((p) => p.createsFirstKey) }) : undefined;
    const deps: RoleDeps = {
      config,
      log,
      store: store.store,
      bus,
      readYourWrites: transport?.readYourWrites,
      keys: access?.keys,
      auth: access?.auth,
    };
    for (const plan of plans) for (const c of plan.components?.(deps) ?? []) await start(c);

    const app = await createHttpServer({
      log,
      bodyLimitBytes: config.WEFT_BODY_LIMIT_BYTES,
      limits: requestLimitsFromConfig(config),
      describe: { roles: plans.map((p) => p.name), store: store.store.mode, ...(bus ? { bus: bus.kind } : {}) },
      // Every component started so far with a probe (the HTTP server is this process).
      readiness: Object.fromEntries(started.flatMap((c) => (c.health ? [[c.name, c.health] as const] : []))),
    });
    // Ack-after-insert's group-commit window waits for the call writes the HTTP edge admitted.
    transport?.expectPublishesFrom?.(() => app.weftAdmission.publishRequestsInFlight());
    const routes: RegisteredRoute[] = [];
    let registering: RoleName | null = null;
    app.addHook('onRoute', (r) => {
      if (registering) for (const method of [r.method].flat()) routes.push({ method, url: r.url, role: registering });
    });
    for (const plan of plans) {
      registering = plan.name;
      await plan.routes?.(app, deps);
    }
    registering = null;
    await app.ready();
    return {
      app,
      store: store.store,
      roles: plans.map((p) => p.name),
      routes,
      ...(access?.firstKey ? { firstKey: access.firstKey } : {}),
      components: started,
      async close() {
        await app.close();
        await stopAll();
      },
    };
  } catch (e) {
    await stopAll().catch((err: unknown) => log.error({ err }, 'stopping after a failed start'));
    throw e;
  }
}
