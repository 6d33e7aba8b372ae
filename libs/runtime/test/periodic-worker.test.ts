import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { type Logger, metrics, statementContext } from '@weft/core';
import { PeriodicWorker, type PeriodicWorkerOptions } from '../src/periodic-worker';

/** A logger that keeps what was logged at warn and error. */
function recordingLog(): { log: Logger; lines: { level: string; obj: unknown; msg: string }[] } {
  const lines: { level: string; obj: unknown; msg: string }[] = [];
  const at = (level: string) => (obj: unknown, msg: string) => void lines.push({ level, obj, msg });
  return { log: { warn: at('warn'), error: at('error') } as unknown as Logger, lines };
}

/** A pass that waits until released, counting how many started and how many ran at once. */
function gatedWork() {
  const seen = { started: 0, concurrent: 0, maxConcurrent: 0, lanes: [] as (string | undefined)[] };
  let release: () => void = () => {};
  let gate = new Promise<void>((r) => (release = r));
  const work = async () => {
    seen.started++;
    seen.concurrent++;
    seen.maxConcurrent = Math.max(seen.maxConcurrent, seen.concurrent);
    seen.lanes.push(statementContext().lane);
    await gate;
    seen.concurrent--;
  };
  const open = () => {
    release();
    gate = new Promise<void>((r) => (release = r));
  };
  return { seen, work, open };
}

const counted = async (metric: typeof metrics.workerPassFailures | typeof metrics.workerPassSeconds, worker: string) =>
  (await metric.get()).values.find((v) => v.labels.worker === worker && !('le' in v.labels))?.value ?? 0;

const options = (name: string, log: Logger, more: Partial<PeriodicWorkerOptions> = {}): PeriodicWorkerOptions => ({
  name,
  intervalMs: 3_600_000,
  log,
  failure: { level: 'error', message: `${name}: a pass failed` },
  ...more,
});

describe('PeriodicWorker', () => {
  it('runs one pass at a time, in the background lane: a pass asked for while one runs is that one', async () => {
    const { seen, work, open } = gatedWork();
    const worker = new PeriodicWorker(work, options('test-one-at-a-time', recordingLog().log));
    const a = worker.pass();
    const b = worker.pass();
    expect(b).toBe(a);
    open();
    await a;
    expect(seen.started).toBe(1);
    const c = worker.pass();
    const d = worker.pass();
    open();
    await Promise.all([c, d]);
    expect(seen).toMatchObject({ started: 2, maxConcurrent: 1, lanes: ['background', 'background'] });
  });

  it('passes on its timer never overlap, and the timer keeps no process alive', async () => {
    const { seen, work, open } = gatedWork();
    const worker = new PeriodicWorker(work, options('test-timer', recordingLog().log, { intervalMs: 20 }));
    worker.start();
    expect((worker as unknown as { timer: NodeJS.Timeout }).timer.hasRef()).toBe(false);
    await expect.poll(() => seen.started).toBe(1);
    // Ticks come and go while the pass is held: none starts another.
    await sleep(100);
    expect(seen.started).toBe(1);
    open();
    await expect.poll(() => seen.started).toBe(2);
    expect(seen.maxConcurrent).toBe(1);
    open();
    await worker.stop();
  });

  it('stop waits for the pass under way, and no pass starts after it', async () => {
    const { seen, work, open } = gatedWork();
    const worker = new PeriodicWorker(work, options('test-stop', recordingLog().log, { intervalMs: 10, firstPassMs: 0 }));
    worker.start();
    expect(seen.started).toBe(1);
    let stopped = false;
    const stopping = worker.stop().then(() => (stopped = true));
    expect(worker.stopping).toBe(true);
    await sleep(50);
    expect(stopped).toBe(false);
    open();
    await stopping;
    expect(seen.concurrent).toBe(0);
    await worker.pass();
    await sleep(50);
    expect(seen.started).toBe(1);
  });

  it('a failed pass is logged and counted, its duration observed, and the next pass runs', async () => {
    const { log, lines } = recordingLog();
    let calls = 0;
    const worker = new PeriodicWorker(
      async () => {
        if (++calls === 1) throw new Error('engine away');
      },
      options('test-failure', log, { failure: { level: 'warn', message: 'test: a pass failed; the next one tries again' } }),
    );
    const failures = await counted(metrics.workerPassFailures, 'test-failure');
    await expect(worker.pass()).resolves.toBeUndefined();
    expect(await counted(metrics.workerPassFailures, 'test-failure')).toBe(failures + 1);
    expect(lines).toEqual([{ level: 'warn', obj: { err: expect.any(Error) }, msg: 'test: a pass failed; the next one tries again' }]);
    await worker.pass();
    expect(calls).toBe(2);
    expect(await counted(metrics.workerPassFailures, 'test-failure')).toBe(failures + 1);
    const observed = (await metrics.workerPassSeconds.get()).values.find(
      (v) => v.labels.worker === 'test-failure' && v.metricName === 'weft_worker_pass_seconds_count',
    );
    expect(observed?.value).toBe(2);
  });

  it('paces by rate (a pass every interval) or by rest (an interval after each pass)', async () => {
    const starts = (pace: 'rate' | 'rest') => {
      const at: number[] = [];
      const worker = new PeriodicWorker(
        async () => {
          at.push(performance.now());
          await sleep(60);
        },
        options(`test-${pace}`, recordingLog().log, { intervalMs: 100, firstPassMs: 0, pace }),
      );
      return { at, worker };
    };
    const rate = starts('rate');
    const rest = starts('rest');
    rate.worker.start();
    rest.worker.start();
    await expect.poll(() => Math.min(rate.at.length, rest.at.length), { timeout: 5000, interval: 20 }).toBeGreaterThanOrEqual(3);
    await Promise.all([rate.worker.stop(), rest.worker.stop()]);
    const gaps = (at: number[]) => at.slice(1).map((t, i) => t - at[i]!);
    // Timers may fire late on a loaded machine, never early.
    for (const g of gaps(rate.at)) expect(g).toBeGreaterThanOrEqual(95);
    for (const g of gaps(rest.at)) expect(g).toBeGreaterThanOrEqual(155);
  });
});
