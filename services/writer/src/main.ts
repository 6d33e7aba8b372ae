import { createBus } from '@weft/bus';
import { createHttpServer, runProgram } from '@weft/http';
import { migrate, openConfiguredStore, pingStore } from '@weft/store';
import { CallPartsWriter } from './writer';

/**
 * The writer alone: consumes the call-parts topic (WEFT_BUS=kafka) and inserts into ClickHouse.
 * Serves /health and /metrics only. Run several with one KAFKA_GROUP_ID to share partitions.
 */
runProgram('writer', async (config, log) => {
  const store = await openConfiguredStore(config, (c) => migrate(c, log));
  const bus = createBus(config, log);
  await bus.start();
  const subscription = await new CallPartsWriter(store, log).subscribe(bus);
  const app = await createHttpServer({
    log,
    bodyLimitBytes: config.WEFT_BODY_LIMIT_BYTES,
    version: '0.1.0',
    readiness: { store: () => pingStore(store), bus: () => bus.health() },
  });
  return {
    app,
    describe: { bus: bus.kind, store: store.mode },
    async close() {
      await app.close();
      // Commits the offsets of everything inserted, then lets go of the partitions.
      await subscription.stop();
      await bus.close();
      await store.close();
    },
  };
});
