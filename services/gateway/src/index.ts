export * from './routes';
export * from './otel';
export * from './otlp-http';
export * from './objects';
export * from './role';
export * from './otlp-grpc';
// The ingest conversions and their worker threads, measured by the benchmarks (bench:ingest, bench:otlp, bench:ingest-engine).
export { encodeCallBatch } from './call-batches';
export { spansToParts, encodeSpanParts } from './otlp-spans';
export { workerSpanConverter } from './span-conversion';
export { IngestWorkers } from './ingest-workers';
