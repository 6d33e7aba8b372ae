import { isApiError, parseAuthorization, unauthorized, unavailable, type AuthScheme, type Caller } from '@weft/core';
import type { Authenticator } from '@weft/http';
import { hashApiKey } from './keys';
import type { KeyStore } from './key-store';

interface Entry {
  caller: Caller | null;
  expires: number;
}

/**
 * Authenticates requests against the key store. Lookups are cached per process for `ttlMs`
 * (by key hash, unknown keys included, so a flood of bad keys does not become a flood of
 * queries). A change made through this process (revoke, membership) clears the cache at
 * once; a change made by another process is seen here within `ttlMs`.
 */
export class KeyStoreAuthenticator implements Authenticator {
  private readonly cache = new Map<string, Entry>();
  private readonly inflight = new Map<string, Promise<Caller | null>>();
  /** Bumped by invalidate(), so a lookup that started before a change is not cached after it. */
  private generation = 0;

  constructor(
    private readonly store: KeyStore,
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
    /** The clock (tests replace it). */
    private readonly now: () => number = Date.now,
  ) {}

  async authenticate(authorization: string | undefined, scheme: AuthScheme): Promise<Caller> {
    const { key } = parseAuthorization(authorization, scheme);
    const caller = await this.resolve(key);
    if (!caller) throw unauthorized('invalid or revoked API key');
    return caller;
  }

  /** Accepts either scheme (admin endpoints, which are not part of the interface). */
  async authenticateAny(authorization: string | undefined): Promise<Caller> {
    const scheme: AuthScheme = /^bearer\s/i.test(authorization ?? '') ? 'bearer' : 'basic';
    return this.authenticate(authorization, scheme);
  }

  /** Forgets every cached lookup: called after any change to keys, users or memberships. */
  invalidate(): void {
    this.generation++;
    this.cache.clear();
    this.inflight.clear();
  }

  private async resolve(key: string): Promise<Caller | null> {
    const hash = hashApiKey(key);
    const hit = this.cache.get(hash);
    if (hit && hit.expires > this.now()) return hit.caller;
    const pending = this.inflight.get(hash);
    if (pending) return pending;
    const generation = this.generation;
    const p = this.store
      .lookup(key)
      .catch((e: unknown) => {
        if (isApiError(e)) throw e;
        throw unavailable(`cannot check the API key now: ${(e as Error).message}`);
      })
      .then((caller) => {
        if (this.ttlMs > 0 && generation === this.generation) {
          if (this.cache.size >= this.maxEntries) this.cache.delete(this.cache.keys().next().value!);
          this.cache.set(hash, { caller, expires: this.now() + this.ttlMs });
        }
        return caller;
      })
      .finally(() => {
        if (this.inflight.get(hash) === p) this.inflight.delete(hash);
      });
    this.inflight.set(hash, p);
    return p;
  }
}
