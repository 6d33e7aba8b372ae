import { inLane, type Logger, metrics } from '@weft/core';

export interface PeriodicWorkerOptions {
  /** The worker's name: the `worker` label of its metrics. */
  name: string;
  /** Time between passes (ms). */
  intervalMs: number;
  /**
   * `rate` (default): a pass every `intervalMs`, a pass that outlasts it skipping the ticks it
   * covered (as setInterval); `rest`: `intervalMs` from the end of a pass to the next.
   */
  pace?: 'rate' | 'rest';
  /** Time from start to the first pass (ms; default `intervalMs`; 0: at once). */
  firstPassMs?: number;
  log: Logger;
  /** What a failed pass logs (with its error); the next pass tries again. */
  failure: { level: 'warn' | 'error'; message: string };
}

/**
 * The skeleton of every background loop (retention, monitors, analytics facts, evaluations'
 * heartbeat, alerts): one pass at a time, each in the engine's background lane so it yields to
 * what people wait for; its duration and failures as metrics by worker; a timer that keeps no
 * process alive; a stop that waits for the pass under way. The pass itself is the worker's.
 */
export class PeriodicWorker {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  /** Counts starts: a tick of a loop stopped and started again since does not schedule a second loop. */
  private generation = 0;

  constructor(
    private readonly work: () => Promise<void>,
    private readonly opts: PeriodicWorkerOptions,
  ) {}

  /** True once stop() was called: a pass under way ends early where it can. */
  get stopping(): boolean {
    return this.stopped;
  }

  start(): void {
    this.stopped = false;
    const generation = ++this.generation;
    const first = this.opts.firstPassMs ?? this.opts.intervalMs;
    if (first === 0) void this.tick(generation);
    else this.schedule(first, generation);
  }

  /** No pass starts after this; resolves once the one under way has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One pass now, or the one under way (none once stopped). Never rejects: a failure is logged and counted. */
  pass(): Promise<void> {
    if (this.running) return this.running;
    if (this.stopped) return Promise.resolve();
    const worker = this.opts.name;
    const started = performance.now();
    this.running = inLane('background', this.work)
      .catch((err: unknown) => {
        metrics.workerPassFailures.inc({ worker });
        this.opts.log[this.opts.failure.level]({ err }, this.opts.failure.message);
      })
      .finally(() => {
        metrics.workerPassSeconds.observe({ worker }, (performance.now() - started) / 1000);
        this.running = null;
      });
    return this.running;
  }

  private async tick(generation: number): Promise<void> {
    this.timer = null;
    const at = performance.now();
    await this.pass();
    if (this.stopped || generation !== this.generation) return;
    const { intervalMs } = this.opts;
    const took = performance.now() - at;
    this.schedule(this.opts.pace === 'rest' || intervalMs === 0 ? intervalMs : intervalMs - (took % intervalMs), generation);
  }

  private schedule(ms: number, generation: number): void {
    this.timer = setTimeout(() => void this.tick(generation), ms);
    this.timer.unref();
  }
}

/**
 * A background worker as a component: its work is one PeriodicWorker's passes (`runPass`), and
 * start, stop (which waits for the pass under way) and "one pass now" are the worker's. A pass
 * under way reads `stopping` to end early.
 */
export abstract class PeriodicComponent {
  protected readonly worker: PeriodicWorker;

  protected constructor(opts: PeriodicWorkerOptions) {
    this.worker = new PeriodicWorker(() => this.runPass(), opts);
  }

  /** One pass of the worker's work. */
  protected abstract runPass(): Promise<void>;

  /** True once stop() was called. */
  protected get stopping(): boolean {
    return this.worker.stopping;
  }

  start(): void {
    this.worker.start();
  }

  stop(): Promise<void> {
    return this.worker.stop();
  }

  /** One pass now (or the one running). */
  pass(): Promise<void> {
    return this.worker.pass();
  }
}
