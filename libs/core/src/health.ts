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

export interface CheckResult {
  status: 'up' | 'down';
  ms: number;
  reason?: string;
  [detail: string]: unknown;
}

export interface Readiness {
  ready: boolean;
  checks: Record<string, CheckResult>;
  /** The components that are down, by name (empty when ready). */
  down: string[];
}

/** Runs every probe at once, each with its own deadline; one that does not answer in time is down. */
export async function checkReadiness(components: readonly Component[], deadlineMs: number): Promise<Readiness> {
  const probed = components.filter((c): c is Component & { health: HealthProbe } => c.health !== undefined);
  const results = await Promise.all(probed.map(async (c) => [c.name, await probe(c.health, deadlineMs)] as const));
  const checks = Object.fromEntries(results);
  return {
    ready: results.every(([, r]) => r.status === 'up'),
    checks,
    down: results.filter(([, r]) => r.status === 'down').map(([n]) => n),
  };
}

async function probe(health: HealthProbe, deadlineMs: number): Promise<CheckResult> {
  const started = performance.now();
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      abort.abort();
      reject(new Error(`no answer within ${deadlineMs} ms`));
    }, deadlineMs);
  });
  try {
    const details = await Promise.race([health(abort.signal), deadline]);
    return { ...(details ?? {}), status: 'up', ms: Math.round(performance.now() - started) };
  } catch (e) {
    return { status: 'down', ms: Math.round(performance.now() - started), reason: (e as Error).message || String(e) };
  } finally {
    clearTimeout(timer);
  }
}
