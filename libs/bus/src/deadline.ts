/** The answer owed to one publisher: given once, by the bus or by the deadline, whichever is first. */
export interface Settleable {
  /** True once the publisher has its answer; later answers are ignored. */
  settled: boolean;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/**
 * Creates `fields` as a pending publish, hands it to `enqueue`, and resolves or rejects when
 * the bus answers it, or with `onTimeout`'s error once `timeoutMs` pass with no answer (then
 * the publish counts as not acknowledged, whatever the bus does with it later).
 */
export function publishWithDeadline<F extends object>(
  fields: F,
  timeoutMs: number,
  onTimeout: (p: F & Settleable) => Error,
  enqueue: (p: F & Settleable) => void,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const p = { ...fields, settled: false } as F & Settleable;
    const timer = setTimeout(() => {
      if (p.settled) return;
      p.settled = true;
      reject(onTimeout(p));
    }, timeoutMs);
    timer.unref();
    p.resolve = () => {
      clearTimeout(timer);
      if (!p.settled) {
        p.settled = true;
        resolve();
      }
    };
    p.reject = (e) => {
      clearTimeout(timer);
      if (!p.settled) {
        p.settled = true;
        reject(e);
      }
    };
    enqueue(p);
  });
}
