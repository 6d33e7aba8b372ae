import { ConfigError, createLogger, loadConfig, StartupError, type Config } from '@weft/core';
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
    const address = await weft.app.listen({ port: config.PORT, host: config.HOST }).catch(async (e: unknown) => {
      await weft.close();
      throw listenFailure(e, config);
    });
    const port = (weft.app.server.address() as { port: number }).port;
    const bus = weft.components.find((c) => c.name === 'bus');
    log.info({ address, port, roles: weft.roles, store: weft.store.mode, ...(bus ? { bus: config.WEFT_BUS } : {}) }, 'listening');
    // Shown again last: the first line of start-up scrolls away, and it is never shown after this start.
    if (weft.firstKey) log.warn({ api_key: weft.firstKey.key }, firstKeyReminder(weft.firstKey.key, port));

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
    // A failure the operator can fix is its message alone; anything else keeps its stack.
    const what = err instanceof StartupError ? err.message : ((err as Error).stack ?? String(err));
    process.stderr.write(`weft ${name} failed to start: ${what}\n`);
    process.exit(1);
  });
}

/** The closing line of a first start: the admin key, and how to make the keys people should use. */
function firstKeyReminder(key: string, port: number): string {
  return (
    `admin API key (shown only at this start, save it now): ${key}. ` +
    `More keys: npm run weft -- keys create --user <name> --entity <entity> --url http://localhost:${port} --api-key ${key}`
  );
}

/** A taken or forbidden HTTP port, as a start error naming PORT; anything else unchanged. */
function listenFailure(e: unknown, config: Config): unknown {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE')
    return new StartupError(`PORT=${config.PORT}: port ${config.PORT} is already in use (on ${config.HOST}); set PORT to a free port`);
  if (code === 'EACCES')
    return new StartupError(`PORT=${config.PORT}: no permission to listen on port ${config.PORT}; set PORT to a port above 1023`);
  return e;
}
