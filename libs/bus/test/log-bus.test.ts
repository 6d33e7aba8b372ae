import { appendFileSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { metrics } from '@weft/core';
import { BusUnavailableError, LocalLog, LogBus, type LogBusOptions } from '../src';

const dirOf = (tag: string) => mkdtempSync(join(tmpdir(), `weft-log-${tag}-`));
const texts = (records: { payload: Buffer }[]) => records.map((r) => r.payload.toString());

/** Values as lines (a codec that joins values, as the call-parts codec joins rows). */
const lines = {
  encodeMany: (values: string[]) => Buffer.from(values.join('\n')),
  decodeMany: (bytes: Buffer | null) => (bytes ? bytes.toString().split('\n') : []),
};
const msgs = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ key: tag, value: `${tag}-${i}` }));

function bus(dir: string, over: Partial<LogBusOptions<string>> = {}): LogBus<string> {
  const b = new LogBus<string>({
    dir,
    codec: lines,
    batchRows: 1000,
    flushMs: 20,
    maxPendingBytes: 1 << 20,
    fsync: false,
    log: pino({ level: 'silent' }),
    ...over,
  });
  b.open();
  return b;
}

describe('local log', () => {
  it('reads back what was appended and not committed, across segments, and deletes committed segments', async () => {
    const dir = dirOf('segments');
    const log = new LocalLog({ dir, segmentBytes: 64, fsync: false });
    expect(log.open()).toEqual([]);
    for (let i = 0; i < 10; i++) expect(await log.append([Buffer.from(`record-${i}-${'x'.repeat(20)}`)])).toBe(i);
    log.close();
    const segments = readdirSync(dir).filter((f) => f.endsWith('.log'));
    expect(segments.length).toBeGreaterThan(2);

    const again = new LocalLog({ dir, segmentBytes: 64, fsync: false });
    const pending = again.open();
    expect(pending.map((r) => r.seq)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(texts(pending)[3]).toMatch(/^record-3-/);
    again.commit(6);
    expect(readdirSync(dir).filter((f) => f.endsWith('.log')).length).toBeLessThan(segments.length);
    expect(await again.append([Buffer.from('after')])).toBe(10);
    again.close();

    const third = new LocalLog({ dir, segmentBytes: 64, fsync: false });
    expect(third.open().map((r) => r.seq)).toEqual([7, 8, 9, 10]);
    third.close();
  });

  it("belongs to one process at a time; a dead owner's claim is stale", async () => {
    const dir = dirOf('owner');
    const log = new LocalLog({ dir, segmentBytes: 1 << 20, fsync: false });
    log.open();
    // Another live process (this test's parent, say) holds it: refused, naming it.
    writeFileSync(join(dir, 'owner.pid'), String(process.ppid));
    expect(() => new LocalLog({ dir, segmentBytes: 1 << 20, fsync: false }).open()).toThrow(`in use by process ${process.ppid}`);
    // A pid no process has (killed owner): taken over.
    writeFileSync(join(dir, 'owner.pid'), '4194303');
    const again = new LocalLog({ dir, segmentBytes: 1 << 20, fsync: false });
    expect(again.open()).toEqual([]);
    again.close();
    log.close();
  });

  it('cuts off a torn last frame (a write a kill interrupted) and keeps what came before it', async () => {
    const dir = dirOf('torn');
    const log = new LocalLog({ dir, segmentBytes: 1 << 20, fsync: true });
    log.open();
    await log.append([Buffer.from('one'), Buffer.from('two')]);
    log.close();
    const [segment] = readdirSync(dir).filter((f) => f.endsWith('.log'));
    // A frame header promising 100 bytes, then only 3 of them.
    appendFileSync(join(dir, segment!), Buffer.from([100, 0, 0, 0, 1, 2, 3, 4, 0x61, 0x62, 0x63]));

    const again = new LocalLog({ dir, segmentBytes: 1 << 20, fsync: false });
    expect(texts(again.open())).toEqual(['one', 'two']);
    expect(await again.append([Buffer.from('three')])).toBe(2);
    again.close();
    const third = new LocalLog({ dir, segmentBytes: 1 << 20, fsync: false });
    expect(texts(third.open())).toEqual(['one', 'two', 'three']);
    third.close();
  });
});

/** A store that holds every batch until `release`: the values stay acknowledged and unstored meanwhile. */
async function heldStore(b: ReturnType<typeof bus>): Promise<{ stored: string[]; release: () => void }> {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const stored: string[] = [];
  await b.subscribe('t', async (batch) => {
    await gate;
    stored.push(...batch);
  });
  return { stored, release };
}

describe('log bus', () => {
  it('acknowledges once logged, before the store has the values, and stores them in batches larger than a publish', async () => {
    const b = bus(dirOf('ack'), { flushMs: 50 });
    const stored: string[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    await b.subscribe('t', async (batch) => {
      await gate;
      stored.push(batch);
    });
    await Promise.all(Array.from({ length: 10 }, (_, i) => b.publish('t', msgs(5, `p${i}`))));
    // Acknowledged, not stored yet: the store is held.
    expect(stored).toEqual([]);
    expect(b.pressure().pendingBytes).toBeGreaterThan(0);
    // Operators see the backlog: acknowledged and not yet stored.
    expect((await metrics.ingestLogUnstoredBytes.get()).values[0]!.value).toBe(b.pressure().pendingBytes);
    const caughtUp = b.readYourWrites.caughtUp();
    release();
    await caughtUp;
    expect(stored.flat()).toHaveLength(50);
    expect(stored.length).toBeLessThan(10);
    expect(b.pressure().pendingBytes).toBe(0);
    expect((await metrics.ingestLogUnstoredBytes.get()).values[0]!.value).toBe(0);
    await b.close();
  });

  it('a read barrier waits for what was acknowledged before it, without waiting out the window', async () => {
    const b = bus(dirOf('barrier'), { flushMs: 10_000 });
    const stored: string[] = [];
    await b.subscribe('t', async (batch) => void stored.push(...batch));
    await b.publish('t', msgs(3, 'a'));
    const started = performance.now();
    await b.readYourWrites.caughtUp();
    expect(stored).toEqual(['a-0', 'a-1', 'a-2']);
    expect(performance.now() - started).toBeLessThan(2_000);
    await b.close();
  });

  it("a read of one scope does not wait for another scope's unstored writes, and does wait for its own", async () => {
    // Keys are `<scope>:<id>`; a key without one has no known scope (every read waits for it).
    const scoped = { ...lines, scopeOfKey: (k: string) => (k.includes(':') ? k.split(':')[0] : undefined) };
    const b = bus(dirOf('barrier-scoped'), { codec: scoped, flushMs: 0, caughtUpMaxMs: 5_000 });
    const { stored, release } = await heldStore(b);
    await b.publish('t', [{ key: 'busy:1', value: 'busy-1' }]);
    // Another scope's read goes ahead at once while busy's write is held by the store.
    const started = performance.now();
    await b.readYourWrites.caughtUp('quiet');
    expect(performance.now() - started).toBeLessThan(500);
    expect(stored).toEqual([]);
    // busy's own read waits for it; so does a read of no scope.
    let ownDone = false;
    const own = b.readYourWrites.caughtUp('busy').then(() => (ownDone = true));
    const all = b.readYourWrites.caughtUp();
    await new Promise((r) => setTimeout(r, 100));
    expect(ownDone).toBe(false);
    release();
    await Promise.all([own, all]);
    expect(stored).toEqual(['busy-1']);
    // Stored: nothing is held for busy any more; an unscoped write is waited for by every scope.
    const quick = performance.now();
    await b.readYourWrites.caughtUp('busy');
    expect(performance.now() - quick).toBeLessThan(500);
    await b.publish('t', [{ key: 'nokey', value: 'unscoped' }]);
    await b.readYourWrites.caughtUp('quiet');
    expect(stored).toEqual(['busy-1', 'unscoped']);
    await b.close();
  });

  it('a read barrier gives up after its bound when the store does not answer, and says so', async () => {
    const b = bus(dirOf('barrier-bound'), { flushMs: 0, caughtUpMaxMs: 200 });
    await b.subscribe('t', () => new Promise(() => undefined));
    await b.publish('t', msgs(1, 'stuck'));
    const started = performance.now();
    await b.readYourWrites.caughtUp();
    const waited = performance.now() - started;
    expect(waited).toBeGreaterThanOrEqual(190);
    expect(waited).toBeLessThan(2_000);
  });

  it('a deletion waits for every acknowledged write however long past the read bound, and ends once they are stored', async () => {
    const b = bus(dirOf('barrier-stored'), { flushMs: 0, caughtUpMaxMs: 100 });
    const { stored, release } = await heldStore(b);
    await b.publish('t', msgs(2, 'slow'));
    let done = false;
    const all = b.readYourWrites.stored().then(() => (done = true));
    // Well past the read bound: a read would have gone ahead; the deletion still waits.
    await b.readYourWrites.caughtUp();
    await new Promise((r) => setTimeout(r, 300));
    expect(done).toBe(false);
    release();
    await all;
    expect(stored).toEqual(['slow-0', 'slow-1']);
    await b.close();
  });

  it('refuses publishes past the bound of acknowledged bytes not yet stored, and takes them again once stored', async () => {
    const b = bus(dirOf('bound'), { maxPendingBytes: 100, flushMs: 0 });
    let release!: () => void;
    let gate = new Promise<void>((r) => (release = r));
    await b.subscribe('t', async () => gate);
    await b.publish('t', [{ key: 'k', value: 'x'.repeat(80) }]);
    await expect(b.publish('t', [{ key: 'k', value: 'y'.repeat(80) }])).rejects.toBeInstanceOf(BusUnavailableError);
    release();
    gate = Promise.resolve();
    await b.readYourWrites.caughtUp();
    await b.publish('t', [{ key: 'k', value: 'z'.repeat(80) }]);
    await b.close();
  });

  it('retries a failing store until it succeeds, and dead-letters only the values the store refuses for good', async () => {
    const dir = dirOf('retry');
    const b = bus(dir, { flushMs: 0 });
    const stored: string[] = [];
    let failures = 1;
    await b.subscribe('t', async (batch) => {
      if (failures-- > 0) throw new Error('store down');
      const rejected = batch.flatMap((v, index) => (v.endsWith('-1') ? [{ index, reason: `bad value ${v}` }] : []));
      stored.push(...batch.filter((v) => !v.endsWith('-1')));
      return { rejected };
    });
    await b.publish('t', msgs(3, 'r'));
    await b.readYourWrites.caughtUp();
    expect(stored).toEqual(['r-0', 'r-2']);
    await b.close();
    const dead = new LocalLog({ dir: join(dir, 'dead-letter'), segmentBytes: 1 << 20, fsync: false });
    const letters = texts(dead.open());
    dead.close();
    expect(letters).toHaveLength(1);
    expect(letters[0]).toContain('bad value r-1');
    expect(letters[0]!.endsWith('\nr-1')).toBe(true);
  });

  it('replays at the next start what was acknowledged and not stored (the process stopped first)', async () => {
    const dir = dirOf('replay');
    const first = bus(dir, { flushMs: 0 });
    // A store that never answers: the values stay acknowledged and unstored.
    await first.subscribe('t', () => new Promise(() => undefined));
    await first.publish('t', msgs(2, 'lost'));
    // No close: as after a kill, the log is all that is left.

    const second = bus(dir, { flushMs: 0 });
    const stored: string[] = [];
    await second.subscribe('t', async (batch) => void stored.push(...batch));
    await second.readYourWrites.caughtUp();
    expect(stored).toEqual(['lost-0', 'lost-1']);
    await second.close();

    // Recorded as stored: a third start replays nothing.
    const third = bus(dir, { flushMs: 0 });
    const again: string[] = [];
    await third.subscribe('t', async (batch) => void again.push(...batch));
    await third.readYourWrites.caughtUp();
    expect(again).toEqual([]);
    await third.close();
  });
});
