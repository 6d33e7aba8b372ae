import type { FastifyInstance } from 'fastify';
import { ConfigError, createLogger, loadConfig, type Config, type Logger } from '@weft/core';

/** A runnable service: its HTTP app (routes, /health, /metrics) and how to stop it cleanly. */
export interface Program {
  app: FastifyInstance;
  /** Stops taking requests, finishes what was acknowledged, releases connections. */
  close(): Promise<void>;
  /** Extra fields for the `listening` log line. */
  describe?: Record<string, unknown>;
}

/**
 * The main of every service: configuration read and validated once (exit 2 naming the bad
 * variable), the program built, served on PORT, and stopped gracefully on SIGTERM/SIGINT.
 */
export function runProgram(name: string, build: (config: Config, log: Logger) => Promise<Program>): void {
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
  const start = async () => {
    const program = await build(config, log);
    const address = await program.app.listen({ port: config.PORT, host: config.HOST });
    const port = (program.app.server.address() as { port: number }).port;
    log.info({ address, port, ...program.describe }, 'listening');

    let stopping = false;
    const shutdown = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      log.info({ signal }, 'shutting down');
      const force = setTimeout(() => process.exit(1), 20_000);
      force.unref();
      try {
        await program.close();
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
  start().catch((err) => {
    process.stderr.write(`weft ${name} failed to start: ${(err as Error).stack ?? err}\n`);
    process.exit(1);
  });
}
