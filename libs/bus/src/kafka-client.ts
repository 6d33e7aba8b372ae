import { Kafka, logLevel as KafkaLogLevel } from 'kafkajs';
import type { KafkaConfig, Logger } from '@weft/core';

/** The bus's retries (the producer's sends, the consumers' joins and fetches): for ever, backing off to 2 s. */
export const RETRY_FOREVER = { retries: Number.MAX_SAFE_INTEGER, initialRetryTime: 100, maxRetryTime: 2_000 };

/** The bus's client (its producer, consumers and admin share it), kafkajs's warnings and errors in our log. */
export function kafkaClient(config: KafkaConfig, log: Logger): Kafka {
  return new Kafka({
    clientId: config.clientId,
    brokers: config.brokers,
    retry: RETRY_FOREVER,
    logLevel: KafkaLogLevel.WARN,
    logCreator:
      () =>
      ({ level, log: entry }) => {
        const { message, ...rest } = entry;
        if (level <= KafkaLogLevel.ERROR) log.error(rest, message);
        else log.warn(rest, message);
      },
  });
}
