import type { Logger } from '@weft/core';

export interface WaitOptions {
  /** Give up (throw the last error) once this much time passed since the first try. */
  deadlineMs: number;
  log: Logger;
  /** Backoff bounds between tries. */
  initialDelayMs?: number;
  maxDelayMs?: number;
}

/**
 * Runs `step` until it succeeds, retrying any error with exponential backoff until the
 * deadline. A cluster that is still forming, electing leaders or has a node restarting
 * answers with transient errors ("does not host this topic-partition", "leader not
 * available", connection refused); a service starting next to it waits instead of exiting.
 */
export async function untilKafkaReady<R>(what: string, step: () => Promise<R>, opts: WaitOptions): Promise<R> {
  const started = Date.now();
  let delay = opts.initialDelayMs ?? 250;
  const maxDelay = opts.maxDelayMs ?? 5_000;
  for (let attempt = 1; ; attempt++) {
    try {
      const result = await step();
      if (attempt > 1) opts.log.info({ what, attempts: attempt, waitedMs: Date.now() - started }, 'kafka ready');
      return result;
    } catch (e) {
      const waited = Date.now() - started;
      if (waited + delay > opts.deadlineMs) {
        throw new Error(
          `kafka not ready after ${Math.round(waited / 1000)} s (KAFKA_STARTUP_TIMEOUT_MS=${opts.deadlineMs}) while ${what}: ${(e as Error).message}`,
          { cause: e },
        );
      }
      opts.log.warn(
        { what, attempt, err: (e as Error).message, retryInMs: delay, giveUpInMs: opts.deadlineMs - waited },
        `waiting for kafka: ${what}`,
      );
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(maxDelay, delay * 2);
    }
  }
}
