export { ensureKafkaJars, freePort, startKafkaBroker, type KafkaBroker } from '@weft/harness';
