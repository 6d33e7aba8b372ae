/**
 * A dependency's readiness probe: resolves (with details for /ready) when reachable, rejects
 * with an error saying why when not. It must give up when `signal` aborts: /ready gives each
 * probe a short deadline and aborts it then.
 */
export type HealthProbe = (signal: AbortSignal) => Promise<Record<string, unknown> | undefined>;

/**
 * A part of a process with a lifecycle (the store, the bus, the writer stage, the HTTP
 * server…). `start` runs in composition order, `stop` in reverse; `health` is what /ready
 * asks of every component that has one.
 */
export interface Component {
  readonly name: string;
  start?(): Promise<void>;
  stop?(): Promise<void>;
  health?: HealthProbe;
}
