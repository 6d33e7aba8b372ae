import { describe, expect, it } from 'vitest';
import { ConfigError, configSchema, ingestLogConfig, kafkaConfig, loadConfig, publishStageConfig, writerConfig } from '../src/index';

describe('configuration slices', () => {
  it("give each transport component its settings under its own names, from the one configuration's variables", () => {
    const config = loadConfig({
      WEFT_LOG_FSYNC: '1',
      WEFT_LOG_BATCH_ROWS: '5',
      WEFT_BUS_MAX_PENDING: '7',
      WEFT_PUBLISH_TIMEOUT_MS: '900',
      WEFT_WRITER_FLUSH_MAX_MS: '40',
    });
    expect(ingestLogConfig.parse(config)).toEqual({ maxBatchItems: 5, lingerMs: 100, fsync: true });
    expect(publishStageConfig.parse(config)).toEqual({ maxPendingItems: 7, maxPendingBytes: 256 * 1024 * 1024, timeoutMs: 900 });
    expect(writerConfig.parse(config)).toEqual({ maxBatchItems: 20_000, lingerMs: 20, maxLingerMs: 40, consumers: 1, maxLagMs: 0 });
  });

  it('validate on their own terms: the Kafka slice needs brokers, named as the variable', () => {
    expect(() => loadConfig({ WEFT_BUS: 'kafka' })).toThrow(ConfigError);
    expect(() => loadConfig({ WEFT_BUS: 'kafka', KAFKA_BROKERS: ' , ' })).toThrow(/KAFKA_BROKERS: required when WEFT_BUS=kafka/);
    const kafka = kafkaConfig.parse(loadConfig({ WEFT_BUS: 'kafka', KAFKA_BROKERS: ' k1:9092, k2:9092 ,', KAFKA_COMPRESSION: 'none' }));
    expect(kafka).toMatchObject({ brokers: ['k1:9092', 'k2:9092'], compression: 'none', groupId: 'weft-writer', topicPartitions: 6 });
    const bad = ingestLogConfig.safeParse({ WEFT_LOG_BATCH_ROWS: '0' });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.path).toEqual(['WEFT_LOG_BATCH_ROWS']);
  });

  it('are parts of the one schema: each slice variable is a configuration variable', () => {
    const variables = new Set(Object.keys(configSchema.shape));
    const slices = [kafkaConfig.in.shape, publishStageConfig.in.shape, ingestLogConfig.in.shape, writerConfig.in.shape];
    for (const shape of slices) {
      expect(Object.keys(shape).length).toBeGreaterThan(2);
      for (const k of Object.keys(shape)) expect(variables.has(k)).toBe(true);
    }
  });
});
