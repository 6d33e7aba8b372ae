import { afterAll, beforeAll } from 'vitest';
import { Client, startWeft, type RunningWeft } from '@weft/harness';

export type StartOptions = NonNullable<Parameters<typeof startWeft>[0]>;

/** Something that exists once the file's beforeAll ran; reading it earlier is a test bug. */
function later<T extends object>(what: string, get: () => T | undefined): T {
  return new Proxy({} as T, {
    get(_, key) {
      const target = get();
      if (!target) throw new Error(`${what} used before beforeAll started the server`);
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * The server preamble of an end-to-end test file: one real weft process for the file (started in
 * beforeAll, stopped in afterAll) and an admin client for it. `setup` runs once the server is up
 * (seed data, create keys). Use inside tests and hooks:
 *
 *   const { weft, api } = useWeft({ env: { WEFT_QUERY_PAGE_ROWS: '3' } });
 */
export function useWeft(
  options: StartOptions = {},
  setup?: (api: Client, weft: RunningWeft) => Promise<void>,
): { weft: RunningWeft; api: Client } {
  let running: RunningWeft | undefined;
  let client: Client | undefined;
  beforeAll(async () => {
    running = await startWeft(options);
    client = new Client(running.url);
    await setup?.(client, running);
  }, 180_000);
  afterAll(async () => {
    await running?.stop();
  });
  return { weft: later('weft', () => running), api: later('api', () => client) };
}
