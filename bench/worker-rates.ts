import { performance } from 'node:perf_hooks';
import { IngestWorkers } from '@weft/ingest';

/** Items per wall-clock second, and per CPU-second of this process (steadier on a shared machine). */
export interface Rate {
  per_wall_s: number;
  per_cpu_s: number;
}

const rate = (n: number, ms: number) => Math.round((n / ms) * 1000);

/** A task run back to back for `ms` on this thread (after a few to warm up), `items` per run. */
export function rateOnThisThread(ms: number, items: number, run: () => void): Rate {
  for (let k = 0; k < 5; k++) run();
  let n = 0;
  const t = performance.now();
  const cpu = process.cpuUsage();
  while (performance.now() - t < ms) {
    run();
    n += items;
  }
  const used = process.cpuUsage(cpu);
  return { per_wall_s: rate(n, performance.now() - t), per_cpu_s: rate(n, (used.user + used.system) / 1000) };
}

/**
 * A task on the gateway's ingest threads (WEFT_INGEST_WORKERS), one and then two, each thread
 * kept busy with one request at a time: how the conversion scales with threads on this machine.
 * per_cpu_s counts every thread of this process (the workers and the one handing out). Keys:
 * `<name>_on_1_worker`, `<name>_on_2_workers`.
 */
export async function rateOnIngestWorkers(
  name: string,
  ms: number,
  items: number,
  run: (workers: IngestWorkers) => Promise<unknown>,
): Promise<Record<string, Rate>> {
  const out: Record<string, Rate> = {};
  for (const threads of [1, 2]) {
    const workers = new IngestWorkers(threads);
    try {
      const streams = async (forMs: number) => {
        const until = performance.now() + forMs;
        const counts = await Promise.all(
          Array.from({ length: threads }, async () => {
            let n = 0;
            for (; performance.now() < until; n += items) await run(workers);
            return n;
          }),
        );
        return counts.reduce((a, b) => a + b, 0);
      };
      await streams(Math.min(1000, ms)); // the threads' start and JIT
      const t = performance.now();
      const cpu = process.cpuUsage();
      const n = await streams(ms);
      const used = process.cpuUsage(cpu);
      out[`${name}_on_${threads}_worker${threads > 1 ? 's' : ''}`] = {
        per_wall_s: rate(n, performance.now() - t),
        per_cpu_s: rate(n, (used.user + used.system) / 1000),
      };
    } finally {
      await workers.close();
    }
  }
  return out;
}
