import type { BatchOutcome } from '@weft/bus';
import { isPermanent } from '@weft/core';

/**
 * Stores a batch with `store`; when the store refuses it for good (a permanent error), splits it
 * in halves until the refused items are found: everything else is stored, and the refused items
 * are reported (the bus dead-letters them). A retryable error is thrown as is: the whole batch is
 * retried. Costs nothing on the common path (one call); log2(n) extra calls per refused item.
 */
export async function storeFindingRejected<T>(
  items: T[],
  store: (items: T[]) => Promise<void>,
  between?: () => Promise<void>,
): Promise<BatchOutcome> {
  const rejected: BatchOutcome['rejected'] = [];
  const attempt = async (from: number, to: number): Promise<void> => {
    try {
      await store(items.slice(from, to));
      return;
    } catch (e) {
      if (!isPermanent(e)) throw e;
      if (to - from === 1) {
        rejected.push({ index: from, reason: (e as Error).message });
        return;
      }
    }
    await between?.();
    const mid = from + Math.ceil((to - from) / 2);
    await attempt(from, mid);
    await attempt(mid, to);
  };
  if (items.length > 0) await attempt(0, items.length);
  return { rejected };
}
