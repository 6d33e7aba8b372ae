export { startKafkaCluster, type KafkaCluster, type KafkaClusterNode, type KafkaClusterOptions } from '@weft/harness';
