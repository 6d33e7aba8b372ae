/** Bodies at least this large take their turn (below, a parse is too short to matter). */
export const HEAVY_BODY_BYTES = 16 * 1024;

/**
 * One large body's CPU-bound work (parse, checks, rows, publish) per turn of the event loop.
 * Without it, when many large bodies complete together, their parses run back to back and the
 * new connections waiting behind them — whose refusal would cost microseconds — wait seconds.
 * With it, each turn polls I/O (accepts, header parses, admission answers) between two parses.
 * The work done is the same; only its order changes.
 */
export class EventLoopTurns {
  private readonly waiting: (() => void)[] = [];
  private scheduled = false;

  /** Resolves at a later turn of the loop, in arrival order, one waiter per turn. */
  next(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.waiting.push(resolve);
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    // setImmediate runs after the poll phase: the I/O that arrived meanwhile is served first.
    setImmediate(() => {
      this.scheduled = false;
      this.waiting.shift()?.();
      if (this.waiting.length > 0) this.schedule();
    });
  }
}

/** The process's turns (one event loop, one queue). */
export const heavyBodyTurns = new EventLoopTurns();

/** Runs `work` now for a small body, at its turn for a large one. */
export function whenHeavyBodyTurn(bytes: number, work: () => void): void {
  if (bytes < HEAVY_BODY_BYTES) return work();
  void heavyBodyTurns.next().then(work);
}
