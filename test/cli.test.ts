import { describe, expect, it } from 'vitest';
import { basicAuth, Client } from './helpers/client';
import { weftCli as weft } from './helpers/cli';
import { newDataDir, startWeft } from './helpers/server';

describe('weft CLI', () => {
  it('manages keys on the store directly, and through a running server', async () => {
    const dataDir = newDataDir('cli');
    const env = { WEFT_DATA_DIR: dataDir };
    expect((await weft(['entities', 'create', 'acme'], env)).code).toBe(0);
    const created = await weft(['keys', 'create', '--user', 'alice', '--entity', 'acme', '--name', 'laptop'], env);
    expect(created.code).toBe(0);
    const key = JSON.parse(created.out);
    expect(key.key).toMatch(/^weft_/);
    expect(created.err).toMatch(/only this once/);
    const listed = await weft(['keys', 'list'], env);
    expect(JSON.parse(listed.out).keys.map((k: { key_id: string }) => k.key_id)).toEqual([key.key_id]);
    expect(listed.out).not.toContain(key.key);
    expect((await weft(['keys', 'frobnicate'], env)).code).toBe(2);

    // The server starts on the same store: alice's key works there at once.
    const server = await startWeft({ dataDir });
    try {
      const alice = new Client(server.url, basicAuth(key.key));
      expect((await alice.post('/calls/query_stats', { project_id: 'acme/p' })).status).toBe(200);
      // While it runs, the embedded store is its alone: the CLI says so and how to proceed...
      const locked = await weft(['keys', 'list'], env);
      expect(locked.code).toBe(1);
      expect(locked.err).toMatch(/--url/);
      // Given an admin key alone, it finds the running server itself (the sign-in page's hint; issue 53, item 7).
      const port = new URL(server.url).port;
      const found = await weft(['keys', 'create', '--user', 'bob', '--entity', 'acme'], { ...env, PORT: port, WEFT_API_KEY: 'test-key' });
      expect(found.code, found.err).toBe(0);
      expect(JSON.parse(found.out).key).toMatch(/^weft_/);
      expect(found.err).toMatch(/going through it/);
      // ...and works through the server's admin endpoints with an admin key.
      const remote = { ...env, WEFT_URL: server.url, WEFT_API_KEY: 'test-key' };
      const revoked = await weft(['keys', 'revoke', key.key_id], remote);
      expect(revoked.code, revoked.err).toBe(0);
      expect((await alice.post('/calls/query_stats', { project_id: 'acme/p' })).status).toBe(401);
      const denied = await weft(['entities', 'list'], { ...remote, WEFT_API_KEY: key.key });
      expect(denied.code).toBe(1);
      expect(denied.err).toMatch(/401/);
    } finally {
      await server.stop();
    }
  }, 240_000);
});
