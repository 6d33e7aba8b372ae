import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

/** Structured JSON logs, one line per event. `level` comes from configuration. */
export function createLogger(level: string, base: Record<string, unknown> = {}): Logger {
  const opts: LoggerOptions = { level, base: { service: 'weft', ...base } };
  return pino(opts);
}
