import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { microsToIso, nowMicros } from '@weft/core';
import { readMonitorLease, writeMonitorLease } from '@weft/objects';
import type { Store } from '@weft/store';

/** A lease is another process's while its heartbeat is younger than this many looks. */
const STALE_AFTER_LOOKS = 6;
/** After writing a claim, how long to wait before reading who won (another may claim at once). */
const CLAIM_SETTLE_MS = 300;

/**
 * One inference process at a time scores a monitor (the monitor_leases table, migration 161):
 * the holder renews its lease at every look; another takes it once it has been silent for six
 * looks (its process died or stopped). Two processes claiming at once both write, and the later
 * heartbeat wins; the other leaves the monitor to it. Its statements are libs/objects' (monitors.ts).
 */
export class MonitorLeases {
  private readonly owner = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
  private readonly staleAfterMs: number;

  constructor(
    private readonly store: Store,
    lookIntervalMs: number,
  ) {
    // Never sooner than 5 s: the holder's heartbeat runs in the background lane, which yields to
    // interactive work, so a busy machine may delay it a few seconds without the holder being gone.
    this.staleAfterMs = Math.max(5000, lookIntervalMs * STALE_AFTER_LOOKS);
  }

  /** Whether this process scores the monitor now (renewing or taking its lease). */
  async hold(projectId: string, monitor: string): Promise<boolean> {
    const current = await this.read(projectId, monitor);
    if (current && current.owner !== this.owner && current.fresh) return false;
    await this.write(projectId, monitor);
    if (current?.owner === this.owner) return true;
    await new Promise((resolve) => setTimeout(resolve, CLAIM_SETTLE_MS));
    return (await this.read(projectId, monitor))?.owner === this.owner;
  }

  private read(projectId: string, monitor: string): Promise<{ owner: string; fresh: boolean } | null> {
    return readMonitorLease(this.store, projectId, monitor, this.staleAfterMs);
  }

  private async write(projectId: string, monitor: string): Promise<void> {
    await writeMonitorLease(this.store, projectId, monitor, this.owner, microsToIso(nowMicros()));
  }
}
