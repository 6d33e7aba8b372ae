import type { IngestWorkers } from './ingest-workers';
import { encodeSpanParts, type EncodedSpanParts, type OtlpPayload, type SpanPartsOptions, type SpansRefused } from './otlp-spans';

/** One request's conversion, as a worker takes it. */
export interface SpanConversionTask {
  payload: OtlpPayload;
  opts: SpanPartsOptions;
}

/** Where OTLP spans are decoded, converted and encoded (encodeSpanParts): the serving thread, or the ingest workers. */
export interface SpanConverter {
  convert(task: SpanConversionTask): Promise<EncodedSpanParts | SpansRefused>;
}

/** Converts on the calling thread (no ingest workers, and tests that run the gateway in-process). */
export const inlineSpanConverter: SpanConverter = {
  convert: async (task) => encodeSpanParts(task.payload, task.opts),
};

/** Where the ingest workers, if any, say spans are converted. */
export const spanConverterFor = (workers: IngestWorkers | null | undefined): SpanConverter =>
  workers ? workerSpanConverter(workers) : inlineSpanConverter;

/**
 * Converts on the ingest worker threads. A request already decoded (the contract's
 * /otel/v1/trace, parsed with its route's body) is converted here: cloning its objects to a
 * worker would cost what converting does.
 */
export function workerSpanConverter(workers: IngestWorkers): SpanConverter {
  return {
    async convert(task) {
      if ('decoded' in task.payload) return encodeSpanParts(task.payload, task.opts);
      return workers.run('convertSpans', task);
    },
  };
}
