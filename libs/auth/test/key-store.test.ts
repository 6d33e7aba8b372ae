import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '@weft/core';
import { migrate, openStore, type Store } from '@weft/store';
import { basicHeader, hashApiKey, KeyStore, KeyStoreAuthenticator, runAdmin } from '../src/index';

// One embedded store for this file (chDB allows one data path per process).
let store: Store;
let keys: KeyStore;
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'weft-keys-'));
  store = openStore({ dataDir });
  await migrate(store.client);
  keys = new KeyStore(store);
});
afterAll(async () => {
  await store?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const status = async (p: Promise<unknown>) =>
  p.then(
    () => 200,
    (e) => (e instanceof ApiError ? e.status : 500),
  );

describe('key store', () => {
  it('stores only the hash of a key', async () => {
    const k = await keys.createKey({ user: 'u1', entities: ['e1'] });
    const rs = await store.client.query({ query: 'SELECT * FROM weft_api_keys', format: 'JSONEachRow' });
    const text = JSON.stringify(await rs.json());
    expect(text).not.toContain(k.key);
    expect(text).toContain(hashApiKey(k.key));
  });

  it('resolves a key to its user, memberships and default entity', async () => {
    const k = await keys.createKey({ user: 'u2', entities: ['zeta', 'u2'] });
    const caller = await keys.lookup(k.key);
    expect(caller).toEqual({
      userId: k.user_id,
      userName: 'u2',
      keyId: k.key_id,
      isAdmin: false,
      entities: ['u2', 'zeta'],
      defaultEntity: 'u2',
    });
    expect(await keys.lookup(k.key + 'x')).toBeNull();
    expect(await keys.lookup('')).toBeNull();
  });

  it('makes the bootstrap key an admin key, idempotently, and re-activates it after a revoke', async () => {
    expect(await keys.ensureAdminKey('boot-key')).toBe(true);
    expect(await keys.ensureAdminKey('boot-key')).toBe(false);
    const c = await keys.lookup('boot-key');
    expect(c?.isAdmin).toBe(true);
    await keys.revokeKey(c!.keyId);
    expect(await keys.lookup('boot-key')).toBeNull();
    expect(await keys.ensureAdminKey('boot-key')).toBe(true);
    expect((await keys.lookup('boot-key'))?.isAdmin).toBe(true);
  });

  it('validates names and answers conflicts and unknowns with 4xx', async () => {
    expect(await status(runAdmin(keys, '/admin/entities/create', { name: '../etc' }))).toBe(400);
    expect(await status(runAdmin(keys, '/admin/entities/create', { name: 'dup' }))).toBe(200);
    expect(await status(runAdmin(keys, '/admin/entities/create', { name: 'dup' }))).toBe(409);
    expect(await status(runAdmin(keys, '/admin/entities/add_member', { entity: 'dup', user: 'nobody' }))).toBe(404);
    expect(await status(runAdmin(keys, '/admin/keys/create', { user: 'x', entities: ['bad name'] }))).toBe(400);
    // A body that does not fit its schema: 422, as on every route.
    expect(await status(runAdmin(keys, '/admin/keys/create', {}))).toBe(422);
  });
});

describe('authenticator cache', () => {
  it('sees a revoke at once in the process that made it, and within the TTL in another', async () => {
    const k = await keys.createKey({ user: 'u3', entities: ['e3'] });
    const here = new KeyStoreAuthenticator(keys, 60_000);
    let clock = 1_000_000;
    const elsewhere = new KeyStoreAuthenticator(keys, 5_000, 10_000, () => clock);
    const header = basicHeader(k.key);
    expect((await here.authenticate(header, 'basic')).userId).toBe(k.user_id);
    expect((await elsewhere.authenticate(header, 'basic')).userId).toBe(k.user_id);

    await keys.revokeKey(k.key_id);
    here.invalidate(); // what the admin endpoints do after every change
    expect(await status(here.authenticate(header, 'basic'))).toBe(401);
    // The other process still has it cached...
    expect((await elsewhere.authenticate(header, 'basic')).userId).toBe(k.user_id);
    clock += 4_999;
    expect((await elsewhere.authenticate(header, 'basic')).userId).toBe(k.user_id);
    // ...until its TTL runs out.
    clock += 2;
    expect(await status(elsewhere.authenticate(header, 'basic'))).toBe(401);
  });

  it('accepts Basic and Bearer whichever scheme the endpoint is given, and refuses any other', async () => {
    const k = await keys.createKey({ user: 'u4', entities: ['e4'] });
    const auth = new KeyStoreAuthenticator(keys, 1000);
    for (const expected of ['basic', 'bearer'] as const) {
      expect((await auth.authenticate(`Bearer ${k.key}`, expected)).keyId).toBe(k.key_id);
      expect((await auth.authenticate(basicHeader(k.key), expected)).keyId).toBe(k.key_id);
      expect(await status(auth.authenticate(`Digest ${k.key}`, expected))).toBe(401);
      expect(await status(auth.authenticate(`Bearer ${k.key}x`, expected))).toBe(401);
    }
    expect((await auth.authenticateAny(`Bearer ${k.key}`)).keyId).toBe(k.key_id);
  });
});
