import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startKafkaBroker, type KafkaBroker } from './kafka-broker';
import { TEST_ROOT } from './paths';

declare module 'vitest' {
  export interface ProvidedContext {
    /** `host:port` of the broker every Kafka test shares (KAFKA_BROKERS, or one started here). */
    kafkaBrokers: string;
  }
}

/**
 * A fresh scratch directory for every run; each server gets a data dir beneath it. Unless
 * KAFKA_BROKERS names a broker, one Apache Kafka (KRaft, single node) is started for the
 * whole run from jars resolved with Maven, and stopped at the end.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  rmSync(TEST_ROOT, { recursive: true, force: true });
  mkdirSync(TEST_ROOT, { recursive: true });
  let broker: KafkaBroker | null = null;
  if (process.env.KAFKA_BROKERS) {
    project.provide('kafkaBrokers', process.env.KAFKA_BROKERS);
  } else {
    const dir = join(TEST_ROOT, 'kafka');
    mkdirSync(dir, { recursive: true });
    broker = await startKafkaBroker(dir);
    project.provide('kafkaBrokers', broker.brokers);
  }
  return async () => {
    await broker?.stop();
    if (!process.env.WEFT_KEEP_TEST_DATA) rmSync(TEST_ROOT, { recursive: true, force: true });
  };
}
