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
      // Past the deadline the process is killed, not exited: an exit waits in the embedded
      // engine's teardown for whatever statement it still runs, for as long as that takes.
      const force = setTimeout(() => {
        log.error({ deadline_ms: STOP_DEADLINE_MS }, 'shutdown passed its deadline; killing the process');
        process.kill(process.pid, 'SIGKILL');
      }, STOP_DEADLINE_MS);
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

/** How long a graceful stop may take (requests finished, the engine's statements drained). */
const STOP_DEADLINE_MS = 20_000;

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
