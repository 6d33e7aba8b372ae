// What the tests and the benchmarks share to drive real processes: weft servers, a Kafka
// broker, an HTTP client. Neither imports the other's files.
export { REPO_ROOT, TEST_ROOT } from './paths';
export { newDataDir, type RunningWeft, startWeft } from './server';
export { basicAuth, bearerAuth, Client, HARNESS_API_KEY, postOversized, type Reply } from './client';
export { ensureKafkaJars, freePort, type KafkaBroker, startKafkaBroker } from './kafka-broker';
export { metricSeries, metricValue } from './metrics';
export { type FakeDialect, type ModelServer, type RecordedRequest, startModelServer } from './model-server';
export { type LoadOutcome, memoryOf, percentile, runLoad } from './load';
export { ARTIFACTS_DIR, ensureChromium, launchBrowser } from './browser';
export { type KafkaCluster, type KafkaClusterNode, type KafkaClusterOptions, startKafkaCluster } from './kafka-cluster';
export { type FrontProxy, NGINX_CONF, startFrontProxy } from './front-proxy';
export { type SharedClickHouse, startSharedClickHouse } from './clickhouse-http';
export { KeepAlivePoster } from './keep-alive-poster';
export { processCpuMicros, threadCpuByName, threadCpuSince } from './process-cpu';
export { endedCallsBatch, publishMonitor } from './monitor-objects';
export { callPartTsvLine, encodeCallPartsTsv } from './call-part-tsv';
