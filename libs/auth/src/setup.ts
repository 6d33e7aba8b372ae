import type { Config, Logger } from '@weft/core';
import type { Store } from '@weft/store';
import { KeyStoreAuthenticator } from './authenticator';
import { bootstrapKeys, type FirstKey } from './bootstrap';
import { KeyStore } from './key-store';

/**
 * What a service needs to authenticate requests: the key store on its ClickHouse, the start-up
 * keys (WEFT_BOOTSTRAP_API_KEY, ensured by every service; a first admin key when the store has
 * none, created only where `createFirstKey`, i.e. where the gateway runs) and the caching
 * authenticator. Every service that serves the interface calls this.
 */
export async function setupAuth(
  store: Store,
  config: Config,
  log: Logger,
  opts: { createFirstKey?: boolean } = {},
): Promise<{ keys: KeyStore; auth: KeyStoreAuthenticator; firstKey?: FirstKey }> {
  const keys = new KeyStore(store);
  const firstKey = await bootstrapKeys(keys, config.WEFT_BOOTSTRAP_API_KEY, log, { createFirstKey: opts.createFirstKey ?? true });
  return { keys, auth: new KeyStoreAuthenticator(keys, config.WEFT_AUTH_CACHE_TTL_MS), firstKey };
}
