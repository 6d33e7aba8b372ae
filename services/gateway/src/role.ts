import { adminRoutes, graphqlRoutes } from '@weft/auth';
import { delivery } from '@weft/core';
import { ingestSettingsFor, ingestWorkersFor } from '@weft/ingest';
import { needs, type Role } from '@weft/runtime';
import { otlpGrpcFromConfig, type OtlpGrpcReceiver } from './otlp-grpc';
import { gatewayRoutes } from './routes';

/** The write endpoints (call parts onto the bus; objects, tables, feedback to the store) and the admin endpoints. */
export const gatewayRole: Role = (config, log) => ({
  name: 'gateway',
  usesBus: true,
  // A first admin key is made only where the gateway runs (one place in a distributed setup).
  createsFirstKey: true,
  async routes(app, deps) {
    const auth = needs(deps.auth, 'auth', 'gateway');
    const bus = needs(deps.bus, 'the bus', 'gateway');
    // One set of ingest threads for every entrance (HTTP, gRPC), if any.
    const workers = ingestWorkersFor(config.WEFT_INGEST_WORKERS, log);
    let grpc: OtlpGrpcReceiver | null = null;
    // Stopped with the HTTP server: the gRPC receiver first, then the threads its requests use.
    app.addHook('onClose', async () => {
      await grpc?.close();
      await workers?.close();
    });
    // The projects' ingest policies, one reader for every entrance of the process.
    const settings = ingestSettingsFor(deps.store, log);
    delivery.lagWarningSeconds = config.WEFT_DELIVERY_LAG_WARN_MS / 1000;
    await app.register(gatewayRoutes, {
      bus,
      store: deps.store,
      auth,
      workers,
      settings,
      ...(deps.readYourWrites ? { readYourWrites: deps.readYourWrites } : {}),
    });
    await app.register(adminRoutes, { keys: needs(deps.keys, 'the key store', 'gateway'), auth });
    // weave.init's W&B GraphQL operations, so WANDB_BASE_URL=<weft> is enough for the SDK.
    await app.register(graphqlRoutes, { auth });
    // OTLP/gRPC on its own port (WEFT_OTLP_GRPC_PORT).
    grpc = await otlpGrpcFromConfig(config, { bus, store: deps.store, auth, rateLimit: app.weftRateLimit, log, workers, settings });
  },
});
