import { basicAuth, type Client } from './client';

export interface TestKey {
  key: string;
  key_id: string;
  user_id: string;
  entities: string[];
}

/** Creates a (non-admin unless asked) key through the admin endpoints, as the CLI does. */
export async function createKey(admin: Client, user: string, entities: string[], isAdmin = false): Promise<TestKey> {
  const r = await admin.post('/admin/keys/create', { user, entities, admin: isAdmin });
  if (r.status !== 200) throw new Error(`/admin/keys/create → ${r.status}: ${r.text}`);
  return r.body as TestKey;
}

/** A client using that key with Basic api:<key>. */
export const clientFor = (base: Client, key: TestKey) => base.withAuth(basicAuth(key.key));
