// What the tests and the benchmarks share to drive real processes: weft servers, a Kafka
// broker, an HTTP client. Neither imports the other's files.
export * from './paths';
export * from './server';
export * from './client';
export * from './kafka-broker';
export * from './metrics';
export * from './model-server';
export * from './load';
export * from './browser';
export * from './kafka-cluster';
export * from './front-proxy';
export * from './clickhouse-http';
export * from './keep-alive-poster';
export * from './process-cpu';
export * from './monitor-objects';
