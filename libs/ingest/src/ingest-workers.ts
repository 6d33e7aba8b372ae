import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { DIST_URL, type Logger } from '@weft/core';

/**
 * The worker's entry: compiled, its own bundle beside the server's (scripts/build.ts); from the
 * sources, a shim that loads ingest-worker.ts through tsx.
 */
const WORKER_URL =
  typeof WEFT_COMPILED !== 'undefined' ? new URL('ingest-worker.mjs', DIST_URL) : new URL('./ingest-worker.mjs', import.meta.url);

/**
 * A task of the pool, by the name its entry exports (ingest-worker.ts: the conversions of
 * IngestConversions, conversions.ts, which hands this pool its tasks).
 */
export type IngestTaskName = 'convertSpans' | 'convertCallBatch';

/**
 * The ingest worker threads (the gateway's). The CPU-heavy half of its hot write routes is pure: an
 * OTLP request's spans (decode, convert, rows) and an upsert batch's calls (parse, the edge's
 * checks, rows), each ending in the parts' RowBinary bytes. A request's body costs the serving
 * thread 40–60 CPU-µs per call or span when it does all of it, so one JavaScript thread caps
 * ingestion while cores sit idle (docs/performance.md); on these threads the serving thread keeps
 * HTTP, gRPC, auth and the publish. One pool serves every route. Requests queue for a free
 * thread, bounded by what the HTTP edge admits (WEFT_MAX_INFLIGHT_*). A task that throws fails
 * its request as it would on the serving thread (500, nothing published); a worker that dies
 * fails the request it held and is replaced.
 */
export class IngestWorkers {
  private readonly pool: Piscina;

  constructor(readonly threads: number) {
    this.pool = new Piscina({
      filename: WORKER_URL.href,
      minThreads: threads,
      maxThreads: threads,
      // Kept warm: a thread started per burst would pay its start and its JIT again.
      idleTimeout: Infinity,
      // First come, first converted. By default a task the pool could not hand out at once goes
      // back to the queue's tail: single requests waited 3–11 s behind later ones (docs/performance.md).
      stricterFIFO: true,
    });
  }

  run<R>(name: IngestTaskName, task: unknown): Promise<R> {
    return this.pool.run(task, { name }) as Promise<R>;
  }

  /** Requests under way finish; none arrives after the servers are closed. */
  close(): Promise<void> {
    return this.pool.close();
  }
}

/**
 * WEFT_INGEST_WORKERS as a thread count. `auto`: none below 4 cores (measured on 2: the all-in-one
 * gained in some pairs and lost in others, the Kafka-mode gateway lost; a worker competes with the
 * engine or the broker for the other core), then the cores less two (the serving thread, the
 * engine), at most 4.
 */
export function ingestWorkerCount(setting: 'auto' | number, cores = availableParallelism()): number {
  if (setting !== 'auto') return setting;
  return cores < 4 ? 0 : Math.min(4, cores - 2);
}

/** The threads WEFT_INGEST_WORKERS asks for (logged), or null: everything on the serving thread. */
export function ingestWorkersFor(setting: 'auto' | number, log: Logger): IngestWorkers | null {
  const threads = ingestWorkerCount(setting);
  if (threads === 0) return null;
  log.info({ ingestWorkers: threads }, 'request bodies of the ingest routes are converted on worker threads');
  return new IngestWorkers(threads);
}
