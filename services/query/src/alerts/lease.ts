import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { Store } from '@weft/store';
import { readAlertLease, writeAlertLease } from '@weft/objects';

/** A lease is another process's while its heartbeat is younger than this many intervals. */
const STALE_AFTER_INTERVALS = 3;
/** After writing a claim, how long to wait before reading who won (another may claim at once). */
const CLAIM_SETTLE_MS = 300;

/**
 * One process at a time evaluates alerts and delivers their notifications, so two processes on
 * one store never fire or send the same transition twice. The holder renews its heartbeat as it
 * works; another takes the lease once it has been silent for three intervals (its process died).
 * Two claiming at once both write, wait, and read: the later heartbeat wins, the other stands
 * aside. On an embedded store the data directory's lock already makes this process the only
 * one, so its owner name is fixed: a process restarted after a SIGKILL holds the lease at once
 * instead of waiting for its own old heartbeat to go stale.
 */
export class AlertLease {
  private readonly owner: string;
  private readonly staleAfterMs: number;
  private lastBeatMs = 0;

  constructor(
    private readonly store: Store,
    private readonly intervalMs: number,
    private readonly name = 'alerts',
  ) {
    this.owner = store.mode === 'embedded' ? 'embedded-store' : `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
    this.staleAfterMs = Math.max(1000, intervalMs * STALE_AFTER_INTERVALS);
  }

  /** Whether this process works now (renewing or taking the lease). */
  async hold(): Promise<boolean> {
    const current = await readAlertLease(this.store, this.name, this.staleAfterMs);
    if (current && current.owner !== this.owner && current.fresh) return false;
    await this.beat();
    if (current?.owner === this.owner) return true;
    await new Promise((resolve) => setTimeout(resolve, CLAIM_SETTLE_MS));
    return (await readAlertLease(this.store, this.name, this.staleAfterMs))?.owner === this.owner;
  }

  /**
   * Before a transition is recorded: still the holder (renewed when half an interval has passed
   * since the last heartbeat, so a long pass keeps it). False: another process took over.
   */
  async stillHeld(): Promise<boolean> {
    const current = await readAlertLease(this.store, this.name, this.staleAfterMs);
    if (current?.owner !== this.owner) return false;
    if (Date.now() - this.lastBeatMs > this.intervalMs / 2) await this.beat();
    return true;
  }

  /**
   * During a long pass: still the holder, checked (and renewed) once half an interval has passed
   * since the last heartbeat, else assumed without a statement. A pass that outlives its lease
   * stops before writing what the new holder may have written since.
   */
  async keep(): Promise<boolean> {
    if (Date.now() - this.lastBeatMs <= this.intervalMs / 2) return true;
    return this.stillHeld();
  }

  private async beat(): Promise<void> {
    this.lastBeatMs = Date.now();
    await writeAlertLease(this.store, this.name, this.owner);
  }
}
