/**
 * Ingest sampling (Weave's /project/ingest_sampling_settings): a project keeps a share of its new
 * traces, decided per trace id — the same decision for every call of a trace, in every process,
 * whichever entrance its calls come by — so a trace is kept or dropped whole.
 */
export interface SamplingSetting {
  /** The share of traces kept, 0–1. */
  sample_rate: number;
  /** Decide and count, but keep everything (what a rate would drop is counted as would_sample_out). */
  dry_run: boolean;
}

/** A trace id as a number in [0, 1): FNV-1a over its UTF-16 units, then murmur3's finaliser so close ids spread. */
export function traceFraction(traceId: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < traceId.length; i++) {
    h ^= traceId.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) / 4_294_967_296;
}

/** Whether a trace is kept at `rate`. */
export const traceKept = (traceId: string, rate: number): boolean => rate >= 1 || (rate > 0 && traceFraction(traceId) < rate);

/** How many dropped call ids a process remembers, for ends that come later without their trace id. */
const REMEMBERED_DROPS = 100_000;

/**
 * The calls dropped recently, so an end that comes apart from its start and names no trace id
 * (the Weave SDK before 0.54, a plain /call/end) follows its start. Bounded: the oldest are
 * forgotten first; an end not found is kept (invisible: reads start from a call's start).
 */
export class DroppedCalls {
  private readonly ids = new Set<string>();

  add(key: string): void {
    if (this.ids.size >= REMEMBERED_DROPS) {
      const oldest = this.ids.values().next().value;
      if (oldest !== undefined) this.ids.delete(oldest);
    }
    this.ids.add(key);
  }

  has(key: string): boolean {
    return this.ids.has(key);
  }
}
