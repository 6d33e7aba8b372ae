import { randomBytes, randomUUID } from 'node:crypto';
import kafkajs, { type PartitionMetadata } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { keyPartition, murmur2 } from '../src/murmur2';

const { Partitioners } = kafkajs;

describe('keyPartition', () => {
  it("places every key where kafkajs's default partitioner (Kafka's Java placement) does", () => {
    const kafkajsPartitioner = Partitioners.DefaultPartitioner();
    const keys = [
      '',
      'a',
      'ab',
      'abc',
      'abcd',
      'acme/proj/0190b6e4-2c1d-7c5e-9a4b-1f2e3d4c5b6a',
      'ünïcödé/projekt/ключ',
      '🙂 emoji key',
      'x'.repeat(300), // longer than the reused scratch buffer
      ...Array.from({ length: 2000 }, (_, i) => `entity-${i}/project/${randomUUID()}`),
      ...Array.from({ length: 200 }, () => randomBytes(1 + (randomBytes(1)[0]! % 40)).toString('latin1')),
    ];
    for (const partitions of [1, 3, 6, 7, 64]) {
      const partitionMetadata = Array.from({ length: partitions }, (_, partitionId) => ({ partitionId, leader: 0 }) as PartitionMetadata);
      for (const key of keys) {
        const expected = kafkajsPartitioner({ topic: 't', partitionMetadata, message: { key, value: null } });
        expect(keyPartition(key, partitions), `${JSON.stringify(key)} over ${partitions}`).toBe(expected);
      }
    }
  });

  it('matches known murmur2 values of the Java client', () => {
    // From Kafka's UtilsTest.testMurmur2 (clients/src/test/java/org/apache/kafka/common/utils/UtilsTest.java).
    const cases: [string, number][] = [
      ['21', -973932308],
      ['foobar', -790332482],
      ['a-little-bit-long-string', -985981536],
      ['a-little-bit-longer-string', -1486304829],
      ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
      ['abc', 479470107],
    ];
    for (const [key, hash] of cases) expect(murmur2(Buffer.from(key))).toBe(hash);
  });
});
