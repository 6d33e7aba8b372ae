import { ApiError, metrics } from '@weft/core';

/** What bounds heavy requests (WEFT_HEAVY_PER_PROJECT, WEFT_HEAVY_PER_KEY, WEFT_HEAVY_WAIT_MS). */
export interface HeavyLimits {
  heavyPerProject: number;
  heavyPerKey: number;
  heavyWaitMs: number;
}

/**
 * Fairness for heavy requests (analytics, exports, aggregates, dashboards): one project, and one
 * API key, hold at most so many at once, so one person's dashboard cannot take every heavy
 * connection from the rest of the team. Past the cap a request waits a short, bounded while for
 * a turn, then gets 429 with Retry-After and a message naming the limit — never an unbounded queue.
 */
export class HeavyTurns {
  private readonly held = new Map<string, number>();
  private readonly waiters = new Set<() => void>();

  constructor(private readonly limits: HeavyLimits) {}

  /** A turn for a heavy request of `project` by `keyId`; release it when the response is done. */
  async acquire(project: string | undefined, keyId: string, signal: AbortSignal): Promise<() => void> {
    const keys = [...(project ? [`project:${project}`] : []), `key:${keyId}`];
    const deadline = Date.now() + this.limits.heavyWaitMs;
    for (;;) {
      const full = keys.find((k) => (this.held.get(k) ?? 0) >= this.capOf(k));
      if (!full) break;
      const left = deadline - Date.now();
      if (left <= 0 || signal.aborted) {
        metrics.laneRefused.inc({ lane: 'heavy', reason: full.startsWith('project:') ? 'project_cap' : 'key_cap' });
        throw this.refusal(full);
      }
      await this.turnOrTimeout(left, signal);
    }
    for (const k of keys) this.held.set(k, (this.held.get(k) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const k of keys) {
        const n = (this.held.get(k) ?? 1) - 1;
        if (n <= 0) this.held.delete(k);
        else this.held.set(k, n);
      }
      for (const wake of [...this.waiters]) wake();
    };
  }

  private capOf(key: string): number {
    return key.startsWith('project:') ? this.limits.heavyPerProject : this.limits.heavyPerKey;
  }

  private refusal(key: string): ApiError {
    const [kind, name] = key.startsWith('project:') ? ['project', key.slice(8)] : ['API key', undefined];
    const cap = this.capOf(key);
    const variable = kind === 'project' ? 'WEFT_HEAVY_PER_PROJECT' : 'WEFT_HEAVY_PER_KEY';
    const retryAfter = Math.max(1, Math.ceil(this.limits.heavyWaitMs / 1000));
    return new ApiError(
      429,
      `too many heavy requests at once (analytics, exports, aggregates): the ${kind}${name ? ` ${name}` : ''} already runs ${cap} (${variable}); retry in ${retryAfter} s`,
      { headers: { 'Retry-After': String(retryAfter) }, label: 'heavy_cap' },
    );
  }

  private turnOrTimeout(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }
}
