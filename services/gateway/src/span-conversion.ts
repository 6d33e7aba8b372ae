import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import type { Logger } from '@weft/core';
import { encodeSpanParts, type EncodedSpanParts, type OtlpPayload, type SpanPartsOptions, type SpansRefused } from './otlp-spans';

/** One request's conversion, as a worker takes it. */
export interface SpanConversionTask {
  payload: OtlpPayload;
  opts: SpanPartsOptions;
}

/**
 * Where OTLP spans are decoded, converted and encoded (encodeSpanParts): the serving thread, or
 * worker threads. A span costs the serving thread ~60 CPU-µs when it does all of it, so one
 * JavaScript thread caps OTLP ingestion while cores sit idle (bench/RESULTS.md); on workers the
 * serving thread keeps only HTTP, the checks and the publish.
 */
export interface SpanConverter {
  convert(task: SpanConversionTask): Promise<EncodedSpanParts | SpansRefused>;
  close(): Promise<void>;
}

/** Converts on the calling thread (WEFT_OTLP_WORKERS=0, one core, and tests that run the gateway in-process). */
export const inlineSpanConverter: SpanConverter = {
  convert: async (task) => encodeSpanParts(task.payload, task.opts),
  close: async () => {},
};

/**
 * WEFT_OTLP_WORKERS as a thread count. `auto`: none below 4 cores (measured on 2: the all-in-one
 * gained in five pairs of eight and lost in two, the Kafka-mode gateway lost in both; the worker
 * competes with the engine or the broker for the other core), then the cores less two (the
 * serving thread, the engine), at most 4.
 */
export function spanWorkerCount(setting: 'auto' | number, cores = availableParallelism()): number {
  if (setting !== 'auto') return setting;
  return cores < 4 ? 0 : Math.min(4, cores - 2);
}

/**
 * Converts on `threads` worker threads (span-conversion-worker.ts), kept running. Requests queue
 * for a free thread; the queue is bounded by what the HTTP edge admits (WEFT_MAX_INFLIGHT_*). A
 * conversion that throws fails its request as it would on the serving thread (500, nothing
 * published); a worker that dies fails the request it held and is replaced. A request already
 * decoded (the contract's /otel/v1/trace, parsed with its route's body) is converted here:
 * cloning its objects to a worker would cost what converting does.
 */
export function workerSpanConverter(threads: number): SpanConverter {
  const pool = new Piscina<SpanConversionTask, EncodedSpanParts | SpansRefused>({
    filename: new URL('./span-conversion-worker.mjs', import.meta.url).href,
    minThreads: threads,
    maxThreads: threads,
    // Kept warm: a thread started per burst would pay its start and its JIT again.
    idleTimeout: Infinity,
    // First come, first converted. By default a task the pool could not hand out at once goes
    // back to the queue's tail: single requests waited 3–11 s behind later ones (RESULTS.md).
    stricterFIFO: true,
  });
  return {
    async convert(task) {
      if ('decoded' in task.payload) return encodeSpanParts(task.payload, task.opts);
      return pool.run(task);
    },
    // Requests under way finish; none arrives after the servers are closed.
    close: () => pool.close(),
  };
}

/** The converter WEFT_OTLP_WORKERS asks for (its threads, if any, logged). */
export function spanConverterFor(setting: 'auto' | number, log: Logger): SpanConverter {
  const threads = spanWorkerCount(setting);
  if (threads === 0) return inlineSpanConverter;
  log.info({ otlpWorkers: threads }, 'OTLP spans are converted on worker threads');
  return workerSpanConverter(threads);
}
