import { CallPartRowBinaryEncoder } from '@weft/store';
import { encodeCallBatch, type CallBatchRefused, type CallBatchTask, type EncodedCallBatch } from './call-batch';
import type { IngestWorkers } from './ingest-workers';
import { encodeSpanParts, type EncodedSpanParts, type OtlpPayload, type SpanPartsOptions, type SpansRefused } from './otlp-spans';

/** One OTLP request's conversion, as a worker takes it. */
export interface SpanConversionTask {
  payload: OtlpPayload;
  opts: SpanPartsOptions;
}

/**
 * The ingest entrances' request bodies to encoded rows, one function each (what an ingest worker
 * thread runs, by name; the serving thread runs the same functions), with the encoder they share.
 */
export class IngestConversions {
  private readonly encoder = new CallPartRowBinaryEncoder();
  readonly convertSpans = (task: SpanConversionTask): EncodedSpanParts | SpansRefused =>
    encodeSpanParts(task.payload, task.opts, this.encoder);
  readonly convertCallBatch = (task: CallBatchTask): EncodedCallBatch | CallBatchRefused => encodeCallBatch(task, this.encoder);
}

/** Where one entrance's bodies are converted: the serving thread, or the ingest workers. */
export interface Converter<T, R> {
  convert(task: T): Promise<R>;
}
export type SpanConverter = Converter<SpanConversionTask, EncodedSpanParts | SpansRefused>;
export type CallBatchConverter = Converter<CallBatchTask, EncodedCallBatch | CallBatchRefused>;

/** Converts on the calling thread (no ingest workers, and tests that run the gateway in-process). */
export const inlineSpanConverter: SpanConverter = spanConverterOn(new IngestConversions());
export const inlineCallBatchConverter: CallBatchConverter = callBatchConverterOn(new IngestConversions());

function spanConverterOn(conversions: IngestConversions): SpanConverter {
  return { convert: async (task) => conversions.convertSpans(task) };
}
function callBatchConverterOn(conversions: IngestConversions): CallBatchConverter {
  return { convert: async (task) => conversions.convertCallBatch(task) };
}

/**
 * Converts spans on the ingest worker threads. A request already decoded (the contract's
 * /otel/v1/trace, parsed with its route's body) is converted here: cloning its objects to a
 * worker would cost what converting does.
 */
export function workerSpanConverter(workers: IngestWorkers, here = new IngestConversions()): SpanConverter {
  return {
    async convert(task) {
      if ('decoded' in task.payload) return here.convertSpans(task);
      return workers.run('convertSpans', task);
    },
  };
}

/** Converts upsert batches (their bytes) on the ingest worker threads. */
export const workerCallBatchConverter = (workers: IngestWorkers): CallBatchConverter => ({
  convert: (task) => workers.run('convertCallBatch', task),
});

/** Where the ingest workers, if any, say each entrance's bodies are converted. */
export function convertersFor(workers: IngestWorkers | null | undefined): { spans: SpanConverter; callBatches: CallBatchConverter } {
  if (workers) return { spans: workerSpanConverter(workers), callBatches: workerCallBatchConverter(workers) };
  const here = new IngestConversions();
  return { spans: spanConverterOn(here), callBatches: callBatchConverterOn(here) };
}
