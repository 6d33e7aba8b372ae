import { splitOutcome, type BatchHandler, type BatchOutcome } from './bus';

export interface GroupCommitOptions<T> {
  /** Hand over at most this many items at once... */
  maxItems: number;
  /** ...and wait at most this long (ms) after the first item for others to join. */
  lingerMs: number;
  handle: BatchHandler<T>;
}

interface Waiter<T> {
  items: T[];
  resolve: (outcome: BatchOutcome) => void;
  reject: (e: unknown) => void;
}

/**
 * Joins concurrent `add` calls into one `handle` call, flushed by size or by time, one at a
 * time; each `add` resolves (or rejects) with the handle call that carried its items, and
 * learns which of its own items were rejected. The Kafka consumer uses it so the batches of
 * several partitions become one handler call (one ClickHouse insert).
 */
export class GroupCommit<T> {
  private waiting: Waiter<T>[] = [];
  private waitingItems = 0;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(private readonly opts: GroupCommitOptions<T>) {}

  add(items: T[]): Promise<BatchOutcome> {
    return new Promise<BatchOutcome>((resolve, reject) => {
      this.waiting.push({ items, resolve, reject });
      this.waitingItems += items.length;
      if (this.waitingItems >= this.opts.maxItems) this.flushNow();
      else if (!this.timer && !this.running) this.timer = setTimeout(() => this.flushNow(), this.opts.lingerMs);
    });
  }

  /** Hands over what is waiting without lingering (size reached, or shutting down). */
  flushNow(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.running || this.waiting.length === 0) return;
    this.running = this.drain().finally(() => {
      this.running = null;
      if (this.waiting.length > 0) this.flushNow();
    });
  }

  private async drain(): Promise<void> {
    while (this.waiting.length > 0) {
      const group: Waiter<T>[] = [];
      const items: T[] = [];
      while (this.waiting.length > 0 && (items.length === 0 || items.length + this.waiting[0]!.items.length <= this.opts.maxItems)) {
        const w = this.waiting.shift()!;
        this.waitingItems -= w.items.length;
        group.push(w);
        for (const it of w.items) items.push(it);
      }
      try {
        // Each add learns its own rejected items, by its own indices.
        const outcomes = splitOutcome(
          await this.opts.handle(items),
          group.map((w) => w.items.length),
        );
        group.forEach((w, i) => w.resolve(outcomes[i]!));
      } catch (e) {
        for (const w of group) w.reject(e);
      }
    }
  }
}
