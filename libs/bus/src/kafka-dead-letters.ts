import { randomUUID } from 'node:crypto';
import type { Kafka } from 'kafkajs';

/** One record of the Kafka dead-letter topic, as the bus wrote it (kafka-consumer.ts deadLetter). */
export interface KafkaDeadLetterRecord {
  partition: number;
  offset: number;
  key: string | null;
  /** The record's value as it was: one value, or the parts of one publish (the codec's encodeMany). */
  value: Buffer | null;
  headers: Record<string, string>;
  /** When it was dead-lettered (ISO). */
  timestamp: string;
}

/** The most records one read returns (the oldest first): a topic with more is read in part, and says so. */
export const MAX_DEAD_LETTERS_READ = 10_000;
const READ_TIMEOUT_MS = 60_000;

/**
 * Reads the dead-letter topic, whole (what it holds now, up to MAX_DEAD_LETTERS_READ), for the
 * admin endpoints: a consumer of its own group (so the writers' group is untouched), from each
 * partition's first offset to its end as of the start of the read, then gone (its group deleted).
 * A read takes a group join (seconds); the records are kept until the topic grows (`cached`).
 */
export class KafkaDeadLetterReader {
  private cache: { ends: string; records: KafkaDeadLetterRecord[] } | null = null;

  constructor(
    private readonly kafka: Kafka,
    private readonly topic: string,
    private readonly clientId: string,
  ) {}

  async read(): Promise<KafkaDeadLetterRecord[]> {
    const admin = this.kafka.admin();
    await admin.connect();
    let ranges: { partition: number; low: number; high: number }[];
    try {
      ranges = (await admin.fetchTopicOffsets(this.topic)).map((p) => ({
        partition: p.partition,
        low: Number(p.low),
        high: Number(p.high),
      }));
    } finally {
      await admin.disconnect();
    }
    const ends = JSON.stringify(ranges);
    if (this.cache?.ends === ends) return this.cache.records;
    const todo = ranges.filter((r) => r.high > r.low);
    const records = todo.length === 0 ? [] : await this.consume(todo);
    records.sort((a, b) => a.timestamp.localeCompare(b.timestamp) || a.partition - b.partition || a.offset - b.offset);
    this.cache = { ends, records };
    return records;
  }

  private async consume(ranges: { partition: number; low: number; high: number }[]): Promise<KafkaDeadLetterRecord[]> {
    const groupId = `${this.clientId}-dead-letter-reader-${randomUUID()}`;
    const consumer = this.kafka.consumer({ groupId, allowAutoTopicCreation: false });
    const records: KafkaDeadLetterRecord[] = [];
    const left = new Map(ranges.map((r) => [r.partition, r.high]));
    await consumer.connect();
    try {
      await consumer.subscribe({ topic: this.topic, fromBeginning: true });
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`reading ${this.topic} took over ${READ_TIMEOUT_MS} ms`)), READ_TIMEOUT_MS);
        const done = () => {
          clearTimeout(timer);
          resolve();
        };
        consumer
          .run({
            autoCommit: false,
            eachBatch: async ({ batch }) => {
              const high = left.get(batch.partition);
              if (high === undefined) return;
              for (const m of batch.messages) {
                const offset = Number(m.offset);
                if (offset >= high) break;
                if (records.length < MAX_DEAD_LETTERS_READ)
                  records.push({
                    partition: batch.partition,
                    offset,
                    key: m.key ? m.key.toString('utf8') : null,
                    value: m.value,
                    headers: Object.fromEntries(Object.entries(m.headers ?? {}).map(([k, v]) => [k, v === undefined ? '' : String(v)])),
                    timestamp: new Date(Number(m.timestamp)).toISOString(),
                  });
                if (offset + 1 >= high) left.delete(batch.partition);
              }
              if (left.size === 0 || records.length >= MAX_DEAD_LETTERS_READ) done();
            },
          })
          .catch(reject);
      });
    } finally {
      await consumer.disconnect().catch(() => undefined);
      const admin = this.kafka.admin();
      await admin
        .connect()
        .then(() => admin.deleteGroups([groupId]))
        .catch(() => undefined)
        .finally(() => admin.disconnect().catch(() => undefined));
    }
    return records;
  }
}
