import type { Logger } from 'pino';
import { FactsKeeper } from '@weft/query';
import { PeriodicComponent } from '@weft/runtime';
import type { Store } from '@weft/store';

export interface CallFactsOptions {
  /** How often a pass builds the segments that need it (ms). */
  intervalMs: number;
  /** A call is built into facts once it started this long ago (ms); later ones are read from the call tables. */
  settleMs: number;
  /** A superseded build's rows are removed this long after it was replaced (ms): reads of it are over by then. */
  graceMs: number;
}

/**
 * The query role's analytics facts: libs/query's FactsKeeper (analytics/facts-keeper.ts), its
 * passes run by a PeriodicWorker; a query asks the keeper (`coverage`) which segments it may read from facts.
 */
export class CallFacts extends PeriodicComponent {
  /** The facts themselves (libs/query): what a query asks which segments it may read from them. */
  readonly keeper: FactsKeeper;

  constructor(store: Store, log: Logger, opts: CallFactsOptions) {
    super({
      name: 'analytics-facts',
      intervalMs: opts.intervalMs,
      // The engine rests `intervalMs` between builds; the first comes soon after the start.
      pace: 'rest',
      firstPassMs: Math.min(opts.intervalMs, 1000),
      log,
      failure: { level: 'warn', message: 'analytics facts: a build pass failed; the next one tries again' },
    });
    this.keeper = new FactsKeeper(store, log, opts);
  }

  protected runPass(): Promise<void> {
    return this.keeper.pass(() => this.stopping);
  }
}
