// The tasks of an ingest worker thread (ingest-workers.ts): each is one request's body.
import { encodeCallBatch, type CallBatchRefused, type CallBatchTask, type EncodedCallBatch } from './call-batches';
import { encodeSpanParts, type EncodedSpanParts, type SpansRefused } from './otlp-spans';
import type { SpanConversionTask } from './span-conversion';

export function convertSpans(task: SpanConversionTask): EncodedSpanParts | SpansRefused {
  return encodeSpanParts(task.payload, task.opts);
}

export function convertCallBatch(task: CallBatchTask): EncodedCallBatch | CallBatchRefused {
  return encodeCallBatch(task);
}
