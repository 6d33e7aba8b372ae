// A worker thread of workerSpanConverter (span-conversion.ts): each task is one OTLP request.
import { encodeSpanParts, type EncodedSpanParts, type SpansRefused } from './otlp-spans';
import type { SpanConversionTask } from './span-conversion';

export default function convertSpans(task: SpanConversionTask): EncodedSpanParts | SpansRefused {
  return encodeSpanParts(task.payload, task.opts);
}
