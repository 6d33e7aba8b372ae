import type { FastifyInstance } from 'fastify';
import type { HealthProbe } from '@weft/core';

/** Each dependency's probe (a component's `health`), by the name /ready reports it under. */
export type ReadinessChecks = Record<string, HealthProbe>;

export interface DependencyState {
  ok: boolean;
  ms: number;
  /** Why it is not ready (absent when ok). */
  reason?: string;
  [detail: string]: unknown;
}

/** Runs one probe under a deadline: one that does not answer in time counts as down (and is aborted). */
async function runCheck(check: HealthProbe, timeoutMs: number): Promise<DependencyState> {
  const started = performance.now();
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      abort.abort();
      reject(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
  });
  try {
    const details = await Promise.race([check(abort.signal), deadline]);
    return { ok: true, ms: Math.round(performance.now() - started), ...(details ?? {}) };
  } catch (e) {
    return { ok: false, ms: Math.round(performance.now() - started), reason: (e as Error).message || String(e) };
  } finally {
    clearTimeout(timer);
  }
}

/** Every dependency checked concurrently, each within `timeoutMs`: the whole answer takes at most about that long. */
export async function checkReadiness(
  checks: ReadinessChecks,
  timeoutMs: number,
): Promise<{ ready: boolean; dependencies: Record<string, DependencyState> }> {
  const names = Object.keys(checks);
  const states = await Promise.all(names.map((n) => runCheck(checks[n]!, timeoutMs)));
  const dependencies = Object.fromEntries(names.map((n, i) => [n, states[i]!]));
  return { ready: states.every((s) => s.ok), dependencies };
}

/**
 * GET /ready: 200 `{status: "ready", dependencies}` when every dependency of this process
 * answers within the deadline, else 503 whose reason names the ones that are down.
 */
export function readinessRoute(app: FastifyInstance, checks: ReadinessChecks, timeoutMs: number): void {
  const doc = {
    tag: 'server',
    summary: 'Readiness: every dependency of this process probed (503 naming those down)',
    auth: 'none',
  } as const;
  app.get('/ready', { config: { probe: true, doc } }, async (_req, reply) => {
    const { ready, dependencies } = await checkReadiness(checks, timeoutMs);
    if (ready) return { status: 'ready', dependencies };
    const down = Object.entries(dependencies)
      .filter(([, s]) => !s.ok)
      .map(([name, s]) => `${name} (${s.reason})`);
    return reply
      .code(503)
      .header('Retry-After', '5')
      .send({ status: 503, reason: `not ready: ${down.join(', ')} down`, dependencies });
  });
}
