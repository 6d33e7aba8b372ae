import type { Config, Logger } from '@weft/core';
import type { Store } from '@weft/store';
import { KeyStoreAuthenticator } from './authenticator';
import { bootstrapKeys } from './bootstrap';
import { KeyStore } from './key-store';

/**
 * What a service needs to authenticate requests: the key store on its ClickHouse, the start-up
 * keys (WEFT_BOOTSTRAP_API_KEY or a first admin key) and the caching authenticator. Every
 * service that serves the interface (all-in-one, or each distributed service) calls this.
 */
export async function setupAuth(store: Store, config: Config, log: Logger): Promise<{ keys: KeyStore; auth: KeyStoreAuthenticator }> {
  const keys = new KeyStore(store.client);
  await bootstrapKeys(keys, config.WEFT_BOOTSTRAP_API_KEY, log);
  return { keys, auth: new KeyStoreAuthenticator(keys, config.WEFT_AUTH_CACHE_TTL_MS) };
}
