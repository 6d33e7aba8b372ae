import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '@weft/core';
import { createTransport, type EnvelopeCodec } from '../src';

/** Values as lines (what the ingest log needs: encodeMany/decodeMany). */
const lines: EnvelopeCodec<string> = {
  encode: (v) => Buffer.from(v),
  decode: (b) => (b ?? Buffer.alloc(0)).toString(),
  encodeMany: (values) => Buffer.from(values.join('\n')),
  decodeMany: (b) => (b ? b.toString().split('\n') : []),
  sizeOf: (v) => v.length,
};
const log = pino({ level: 'silent' });
const dataDir = () => mkdtempSync(join(tmpdir(), 'weft-transport-'));

describe('createTransport', () => {
  it('the ingest log: reads wait on its read-your-writes for what it acknowledged, and its slice sets its batches', async () => {
    const t = createTransport(loadConfig({ WEFT_DATA_DIR: dataDir(), WEFT_LOG_FLUSH_MS: '60000', WEFT_LOG_BATCH_ROWS: '3' }), log, lines);
    expect(t.expectPublishesFrom).toBeUndefined();
    await t.bus.start();
    const batches: string[][] = [];
    await t.bus.subscribe('t', async (b) => void batches.push(b));
    await t.bus.publish('t', [{ key: 'k', value: 'a' }]);
    await t.bus.publish('t', [
      { key: 'k', value: 'b' },
      { key: 'k', value: 'c' },
      { key: 'k', value: 'd' },
    ]);
    // Acknowledged, not waiting out the minute's linger: the read barrier has them stored.
    await t.readYourWrites!.caughtUp();
    expect(batches).toEqual([['a'], ['b', 'c', 'd']]);
    await t.bus.close();
  });

  it('ack-after-insert: no read barrier (acknowledged is stored), and its window waits for the publishes the edge admitted', async () => {
    const t = createTransport(
      loadConfig({ WEFT_DATA_DIR: dataDir(), WEFT_ACK_AFTER: 'insert', WEFT_WRITER_FLUSH_MS: '10', WEFT_WRITER_FLUSH_MAX_MS: '5000' }),
      log,
      lines,
    );
    expect(t.readYourWrites).toBeUndefined();
    // Two requests admitted on publishing routes: the window holds the first publish for the second.
    t.expectPublishesFrom!(() => 2);
    const batches: string[][] = [];
    await t.bus.subscribe('t', async (b) => void batches.push(b));
    const first = t.bus.publish('t', [{ key: 'k', value: 'a' }]);
    await new Promise((r) => setTimeout(r, 100));
    await Promise.all([first, t.bus.publish('t', [{ key: 'k', value: 'b' }])]);
    expect(batches).toEqual([['a', 'b']]);
    await t.bus.close();
  });

  it('Kafka: its slice needs brokers; no read barrier', () => {
    const t = createTransport(loadConfig({ WEFT_BUS: 'kafka', KAFKA_BROKERS: '127.0.0.1:1' }), log, lines);
    expect(t.bus.kind).toBe('kafka');
    expect(t.readYourWrites).toBeUndefined();
    expect(t.expectPublishesFrom).toBeUndefined();
  });
});
