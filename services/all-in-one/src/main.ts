import { ConfigError, createLogger, loadConfig } from '@weft/core';
import { createWeft } from './app';

/** `npm start`: the whole service in one process on PORT (default 6345). */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`${e.message}\n`);
      process.exit(2);
    }
    throw e;
  }
  const log = createLogger(config.LOG_LEVEL, { mode: 'all-in-one' });
  const weft = await createWeft(config, log);
  const address = await weft.app.listen({ port: config.PORT, host: config.HOST });
  const port = (weft.app.server.address() as { port: number }).port;
  log.info({ address, port, store: weft.store.mode }, 'listening');

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 20_000);
    force.unref();
    try {
      await weft.close();
      log.info('stopped');
      process.exit(0);
    } catch (err) {
      log.error({ err }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err) => {
  process.stderr.write(`weft failed to start: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
