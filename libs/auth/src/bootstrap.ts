import type { Logger } from '@weft/core';
import type { KeyStore } from './key-store';

/** The admin key a first start created: shown in this start's log and never again. */
export interface FirstKey {
  key: string;
  key_id: string;
}

/**
 * Start-up key provisioning: WEFT_BOOTSTRAP_API_KEY is made to exist as an admin key; with
 * none given and no active key in the store, one admin key is created and printed once.
 */
export async function bootstrapKeys(
  keys: KeyStore,
  bootstrapKey: string | undefined,
  log: Logger,
  opts: { createFirstKey?: boolean } = {},
): Promise<FirstKey | undefined> {
  if (bootstrapKey) {
    if (await keys.ensureAdminKey(bootstrapKey)) log.info('WEFT_BOOTSTRAP_API_KEY registered as an admin key');
    return undefined;
  }
  if (opts.createFirstKey === false) return undefined;
  const first = await keys.createFirstAdminKeyIfNone();
  if (first) {
    // The one and only time this key is shown: the store keeps its hash alone.
    log.warn(
      { api_key: first.key, key_id: first.key_id, user: first.user },
      'created the first admin API key; save it now, it is not shown after this start (use: Basic api:<key> or Bearer <key>)',
    );
    return { key: first.key, key_id: first.key_id };
  }
  return undefined;
}
