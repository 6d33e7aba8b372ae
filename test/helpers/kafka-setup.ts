import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startKafkaBroker, type KafkaBroker } from './kafka-broker';

declare module 'vitest' {
  export interface ProvidedContext {
    /** `host:port` of the broker every Kafka test shares (KAFKA_BROKERS, or one started here). */
    kafkaBrokers: string;
  }
}

/**
 * The `kafka` project's broker: unless KAFKA_BROKERS names one, one Apache Kafka (KRaft,
 * single node) is started for the whole run from jars resolved with Maven, and stopped at
 * the end. Only the `kafka` project runs this, so unit and e2e runs need no JVM.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let broker: KafkaBroker | null = null;
  let dir: string | null = null;
  if (process.env.KAFKA_BROKERS) {
    project.provide('kafkaBrokers', process.env.KAFKA_BROKERS);
  } else {
    // Outside the scratch root, which other projects' setups empty after this one has run.
    dir = mkdtempSync(join(tmpdir(), 'weft-kafka-'));
    broker = await startKafkaBroker(dir);
    project.provide('kafkaBrokers', broker.brokers);
  }
  return async () => {
    await broker?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  };
}
