import { ConfigError, createLogger, loadConfig, type Config } from '@weft/core';
import { compose } from './compose';
import type { Role } from './role';

/**
 * The main of every service: configuration read and validated once (exit 2 naming the bad
 * variable), the process composed from its roles, served on PORT, and stopped gracefully on
 * SIGTERM/SIGINT. `roles` may depend on the configuration (the all-in-one's WEFT_ROLES).
 */
export function runWeft(name: string, roles: readonly Role[] | ((config: Config) => readonly Role[])): void {
  let config: Config;
  try {
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`${e.message}\n`);
      process.exit(2);
    }
    throw e;
  }
  const log = createLogger(config.LOG_LEVEL, { mode: name });
  const run = async () => {
    const weft = await compose(config, log, typeof roles === 'function' ? roles(config) : roles);
    const address = await weft.app.listen({ port: config.PORT, host: config.HOST });
    const port = (weft.app.server.address() as { port: number }).port;
    const bus = weft.components.find((c) => c.name === 'bus');
    log.info({ address, port, roles: weft.roles, store: weft.store.mode, ...(bus ? { bus: config.WEFT_BUS } : {}) }, 'listening');

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
  };
  run().catch((err: unknown) => {
    process.stderr.write(`weft ${name} failed to start: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
}
