import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BatchingStage, LocalLog, type BatchingStageOptions, type StageErrors } from '../src';

const errors: StageErrors = {
  full: (items, bytes) => new Error(`full (${items} items, ${bytes} bytes)`),
  timedOut: (sent) => new Error(sent ? 'timed out; may still be stored' : 'timed out; not stored'),
  failed: (e) => new Error(`failed: ${(e as Error).message}`),
};

const opened: LocalLog[] = [];
afterEach(() => {
  for (const log of opened.splice(0)) log.close();
});

/** The ingest log's own file as the sender: each batch one record, its items as lines. */
function logSender(tag: string): { log: LocalLog; send: BatchingStageOptions<string>['send']; batches: () => string[][] } {
  const dir = mkdtempSync(join(tmpdir(), `weft-stage-${tag}-`));
  const log = new LocalLog({ dir, segmentBytes: 1 << 20, fsync: false });
  log.open();
  opened.push(log);
  return {
    log,
    send: async (_lane, batch) => void (await log.append([Buffer.from(batch.join('\n'))])),
    batches: () => log.read().map((r) => r.payload.toString().split('\n')),
  };
}

const items = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag}-${i}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('batching stage', () => {
  it('joins offers into batches of at most maxBatchItems, never splitting an offer, in order', async () => {
    const out = logSender('count');
    const stage = new BatchingStage<string>({ send: out.send, maxBatchItems: 10, lingerMs: 20, errors });
    await Promise.all(Array.from({ length: 10 }, (_, i) => stage.offer('t', items(3, `o${i}`), 0)));
    const batches = out.batches();
    expect(batches.map((b) => b.length)).toEqual([9, 9, 9, 3]);
    expect(batches.flat()).toEqual(Array.from({ length: 10 }, (_, i) => items(3, `o${i}`)).flat());
    await stage.close();
  });

  it('bounds a batch by bytes too', async () => {
    const out = logSender('bytes');
    const stage = new BatchingStage<string>({ send: out.send, maxBatchItems: 1000, maxBatchBytes: 100, lingerMs: 20, errors });
    await Promise.all(Array.from({ length: 5 }, (_, i) => stage.offer('t', [`b${i}`], 40)));
    expect(out.batches()).toEqual([['b0', 'b1'], ['b2', 'b3'], ['b4']]);
    await stage.close();
  });

  it('lingers for more offers before a batch, and not at all once a full batch waits', async () => {
    const out = logSender('linger');
    const stage = new BatchingStage<string>({ send: out.send, maxBatchItems: 10, lingerMs: 300, errors });
    const spread = [stage.offer('t', ['a'], 0)];
    await sleep(30);
    spread.push(stage.offer('t', ['b'], 0));
    await Promise.all(spread);
    expect(out.batches()).toEqual([['a', 'b']]);
    const started = performance.now();
    await stage.offer('t', items(10, 'full'), 0);
    expect(performance.now() - started).toBeLessThan(200);
    expect(out.batches()[1]).toHaveLength(10);
    // A flush (a read barrier) sends at once what waits, without waiting out the linger.
    const lingering = stage.offer('t', ['c'], 0);
    const flushed = performance.now();
    await stage.flush('t');
    expect(performance.now() - flushed).toBeLessThan(200);
    await lingering;
    expect(stage.flush('t')).toBeNull();
    await stage.close();
  });

  it('refuses offers past the pending bounds (one alone always goes) and takes them again once answered', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const out = logSender('bound');
    const stage = new BatchingStage<string>({
      send: async (lane, batch) => {
        await gate;
        await out.send(lane, batch);
      },
      maxBatchItems: 100,
      lingerMs: 0,
      maxPendingItems: 5,
      maxPendingBytes: 100,
      errors,
    });
    // Over both bounds, but alone: taken.
    const big = stage.offer('t', items(8, 'big'), 150);
    expect(stage.pending()).toEqual({ items: 8, bytes: 150 });
    await expect(stage.offer('t', ['x'], 1)).rejects.toThrow('full (8 items, 150 bytes)');
    expect(() => stage.checkRoom(1, 1)).toThrow(/full/);
    release();
    await big;
    expect(stage.pending()).toEqual({ items: 0, bytes: 0 });
    await stage.offer('t', items(3, 'a'), 40);
    const b = stage.offer('t', items(2, 'b'), 40);
    await expect(stage.offer('t', ['c'], 70)).rejects.toThrow('full (2 items, 40 bytes)');
    await expect(stage.offer('t', items(4, 'd'), 1)).rejects.toThrow('full (2 items, 40 bytes)');
    await b;
    await stage.close();
    expect(out.batches().flat()).toEqual([...items(8, 'big'), ...items(3, 'a'), ...items(2, 'b')]);
  });

  it('answers an offer not sent by its deadline: "may still be stored" once sent, "not stored" (and never sent) while queued', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const sent: string[] = [];
    // A sender that hangs on demand (the real ones cannot be made to).
    const stage = new BatchingStage<string>({
      send: async (_lane, batch) => {
        await gate;
        sent.push(...batch);
      },
      maxBatchItems: 100,
      lingerMs: 0,
      timeoutMs: 50,
      errors,
    });
    const first = expect(stage.offer('t', ['first'], 10)).rejects.toThrow('timed out; may still be stored');
    const second = expect(stage.offer('t', ['second'], 10)).rejects.toThrow('timed out; not stored');
    await Promise.all([first, second]);
    expect(stage.pending()).toEqual({ items: 0, bytes: 0 });
    release();
    await stage.offer('t', ['third'], 10);
    expect(sent).toEqual(['first', 'third']);
    await stage.close();
  });

  it('retries a failed send until it succeeds, or fails its offers when it does not retry', async () => {
    const out = logSender('retry');
    let failures = 2;
    const retried: number[] = [];
    const flaky: BatchingStageOptions<string>['send'] = async (lane, batch) => {
      if (failures-- > 0) throw new Error('disk away');
      await out.send(lane, batch);
    };
    const retrying = new BatchingStage<string>({
      send: flaky,
      maxBatchItems: 100,
      lingerMs: 0,
      retryMs: 10,
      onRetry: (_e, _lane, _n, attempt) => retried.push(attempt),
      errors,
    });
    await retrying.offer('t', ['kept'], 0);
    expect(retried).toEqual([1, 2]);
    expect(out.batches()).toEqual([['kept']]);
    await retrying.close();

    failures = 1;
    const failing = new BatchingStage<string>({ send: flaky, maxBatchItems: 100, lingerMs: 0, errors });
    await expect(failing.offer('t', ['lost'], 0)).rejects.toThrow('failed: disk away');
    await failing.offer('t', ['next'], 0);
    expect(out.batches()).toEqual([['kept'], ['next']]);
    await failing.close();
  });

  it('keeps a batch whose send keeps failing queued when its lane stops, and sends it once resumed', async () => {
    const out = logSender('stop');
    let down = true;
    const stage = new BatchingStage<string>({
      send: async (lane, batch) => {
        if (down) throw new Error('store down');
        await out.send(lane, batch);
      },
      maxBatchItems: 100,
      lingerMs: 0,
      retryMs: 10,
      errors,
    });
    const acknowledged = stage.offer('t', ['a', 'b'], 2, { admitted: true });
    await sleep(30);
    await stage.stop('t');
    expect(stage.pending()).toEqual({ items: 2, bytes: 2 });
    down = false;
    stage.resume('t');
    await acknowledged;
    expect(out.batches()).toEqual([['a', 'b']]);
    await stage.close();
  });

  it('answers an offer over several lanes once each lane sent its part, with rejections by the offer’s indices', async () => {
    const sends: string[] = [];
    const stage = new BatchingStage<string>({
      send: async (lane, batch) => {
        sends.push(`${lane}:${batch.join(',')}`);
        return { rejected: batch.flatMap((v, index) => (v.startsWith('bad') ? [{ index, reason: `no ${v}` }] : [])) };
      },
      maxBatchItems: 100,
      lingerMs: 0,
      errors,
    });
    const outcome = await stage.offerParts(
      [
        { lane: 'p0', items: ['a', 'bad1'] },
        { lane: 'p1', items: ['bad2', 'b'] },
      ],
      0,
    );
    expect(sends.sort()).toEqual(['p0:a,bad1', 'p1:bad2,b']);
    expect(outcome.rejected).toEqual([
      { index: 1, reason: 'no bad1' },
      { index: 2, reason: 'no bad2' },
    ]);
    await stage.close();
  });
});
