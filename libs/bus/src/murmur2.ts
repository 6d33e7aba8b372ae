/**
 * The partition of a record key as Kafka's default partitioner places it (the Java client's
 * `Utils.murmur2` of the key's UTF-8 bytes, made positive, modulo the partition count), so a
 * call's parts land where any Kafka client would put the same key. kafkajs's own implementation
 * builds a 64-bit Long object per step (2–3 % of the gateway's thread, with the garbage it
 * leaves); 32-bit `Math.imul` is the same arithmetic. `libs/bus/test/murmur2.test.ts` checks both agree.
 */
export function keyPartition(key: string, partitions: number): number {
  return (murmur2(utf8(key)) & 0x7fffffff) % partitions;
}

const SEED = 0x9747b28c;
const M = 0x5bd1e995;

/** Kafka's murmur2 (Java `Utils.murmur2`) of some bytes, as a signed 32-bit integer. */
export function murmur2(data: Uint8Array): number {
  const length = data.length;
  let h = SEED ^ length;
  const whole = length & ~3;
  for (let i = 0; i < whole; i += 4) {
    let k = data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M) ^ k;
  }
  switch (length & 3) {
    case 3:
      h ^= data[whole + 2]! << 16;
    // falls through
    case 2:
      h ^= data[whole + 1]! << 8;
    // falls through
    case 1:
      h ^= data[whole]!;
      h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}

/** A reused buffer for ASCII keys (project and call ids are); anything else is encoded. */
let scratch = new Uint8Array(256);

function utf8(key: string): Uint8Array {
  const n = key.length;
  if (n > scratch.length) scratch = new Uint8Array(n * 2);
  for (let i = 0; i < n; i++) {
    const c = key.charCodeAt(i);
    if (c > 0x7f) return Buffer.from(key, 'utf8');
    scratch[i] = c;
  }
  return scratch.subarray(0, n);
}
