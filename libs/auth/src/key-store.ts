import { badRequest, conflict, notFound, type Caller } from '@weft/core';
import type { StoreStatements } from '@weft/store';
import { displayPrefix, generateApiKey, hashApiKey, hashesEqual, newKeyId, newUserId } from './keys';

export interface EntityInfo {
  name: string;
  created_at: string;
  members: string[];
}

export interface UserInfo {
  user_id: string;
  name: string;
  is_admin: boolean;
  entities: string[];
}

export interface KeyInfo {
  key_id: string;
  prefix: string;
  name: string;
  user_id: string;
  user: string;
  is_admin: boolean;
  entities: string[];
  created_at: string;
  revoked_at: string | null;
}

/** A key as just created: the only moment the key itself exists outside its holder. */
export interface CreatedKey extends KeyInfo {
  key: string;
}

export interface CreateKeyOptions {
  /** The user the key belongs to, created when missing. */
  user: string;
  /** Make (or keep) the user an admin (every entity). */
  admin?: boolean;
  /** Entities the user is made a member of; missing ones are created. */
  entities?: string[];
  /** A label for listings. */
  name?: string;
  /** Use this key instead of a generated one (bootstrap keys only). */
  key?: string;
}

/** Entity and user names: letters, digits, `_`, `-`, `.`; usable in a project_id and a URL. */
const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

function checkName(kind: string, name: string, field: string): void {
  if (!NAME_RE.test(name))
    throw badRequest(`${field}: ${kind} names are 1-128 letters, digits, '_', '-', '.' (not starting with a symbol)`, field);
}

/** ClickHouse's `YYYY-MM-DD hh:mm:ss.fff` (UTC) as ISO 8601. */
const toIso = (s: string | null | undefined): string | null => (s ? `${s.replace(' ', 'T')}Z` : null);

let lastVersion = 0;
/** Row versions for ReplacingMergeTree: increasing within a process, time-based across processes. */
function nextVersion(): number {
  lastVersion = Math.max(lastVersion + 1, Date.now() * 1000);
  return lastVersion;
}

/**
 * Users, their memberships in entities, and their API keys, in ClickHouse. Only hashes of keys
 * are stored. The tables are small and read with FINAL, so every read sees the latest version.
 */
export class KeyStore {
  constructor(private readonly store: StoreStatements) {}

  private rows<T>(query: string, params: Record<string, unknown> = {}): Promise<T[]> {
    return this.store.rows<T>(query, params, { name: 'keys.read' });
  }

  private insert(table: string, values: Record<string, unknown>[]): Promise<void> {
    return this.store.insertRows(table, values, { name: `keys.insert.${table}` });
  }

  // --- entities -------------------------------------------------------------------------

  async entityExists(name: string): Promise<boolean> {
    const r = await this.rows<{ n: number }>('SELECT count() AS n FROM weft_entities FINAL WHERE name = {name:String}', { name });
    return Number(r[0]?.n ?? 0) > 0;
  }

  async createEntity(name: string, opts: { ifMissing?: boolean } = {}): Promise<{ name: string; created: boolean }> {
    checkName('entity', name, 'name');
    if (await this.entityExists(name)) {
      if (opts.ifMissing) return { name, created: false };
      throw conflict(`name: entity "${name}" already exists`);
    }
    await this.insert('weft_entities', [{ name, version: nextVersion() }]);
    return { name, created: true };
  }

  async listEntities(): Promise<EntityInfo[]> {
    const entities = await this.rows<{ name: string; created_at: string }>(
      'SELECT name, toString(created_at) AS created_at FROM weft_entities FINAL ORDER BY name',
    );
    const members = await this.rows<{ entity: string; name: string }>(
      `SELECT m.entity AS entity, u.name AS name
       FROM (SELECT entity, user_id FROM weft_memberships FINAL WHERE removed = 0) AS m
       INNER JOIN (SELECT user_id, name FROM weft_users FINAL) AS u ON u.user_id = m.user_id
       ORDER BY name`,
    );
    return entities.map((e) => ({
      name: e.name,
      created_at: toIso(e.created_at)!,
      members: members.filter((m) => m.entity === e.name).map((m) => m.name),
    }));
  }

  // --- users ----------------------------------------------------------------------------

  /**
   * Names of the given user ids that are, or were, members of `entity` (a removed membership
   * keeps its row), plus `callerId`'s own: who wrote to an entity's projects can be named to
   * whoever may read them, and no one else's name leaves the store.
   */
  async userNamesIn(entity: string, userIds: string[], callerId: string): Promise<{ user_id: string; name: string }[]> {
    if (userIds.length === 0) return [];
    return this.rows<{ user_id: string; name: string }>(
      `SELECT user_id, name FROM weft_users FINAL
       WHERE user_id IN {ids:Array(String)}
         AND (user_id = {caller:String} OR user_id IN (SELECT user_id FROM weft_memberships FINAL WHERE entity = {entity:String}))
       ORDER BY user_id`,
      { ids: [...new Set(userIds)], caller: callerId, entity },
    );
  }

  async findUser(name: string): Promise<UserInfo | null> {
    const r = await this.rows<{ user_id: string; name: string; is_admin: number }>(
      'SELECT user_id, name, is_admin FROM weft_users FINAL WHERE name = {name:String} ORDER BY created_at LIMIT 1',
      { name },
    );
    if (!r[0]) return null;
    return {
      user_id: r[0].user_id,
      name: r[0].name,
      is_admin: Number(r[0].is_admin) === 1,
      entities: await this.membershipsOf(r[0].user_id),
    };
  }

  private async membershipsOf(userId: string): Promise<string[]> {
    const r = await this.rows<{ entity: string }>(
      'SELECT entity FROM weft_memberships FINAL WHERE user_id = {userId:String} AND removed = 0 ORDER BY entity',
      { userId },
    );
    return r.map((x) => x.entity);
  }

  /** The user of that name, created when missing; `admin: true` makes it an admin. */
  async ensureUser(name: string, admin = false): Promise<UserInfo> {
    checkName('user', name, 'user');
    const found = await this.findUser(name);
    if (found && (found.is_admin || !admin)) return found;
    const user_id = found?.user_id ?? newUserId();
    await this.insert('weft_users', [{ user_id, name, is_admin: admin ? 1 : 0, version: nextVersion() }]);
    return { user_id, name, is_admin: admin, entities: found?.entities ?? [] };
  }

  async addMember(entity: string, userName: string): Promise<UserInfo> {
    if (!(await this.entityExists(entity))) throw notFound(`entity: no entity "${entity}"`);
    const user = await this.findUser(userName);
    if (!user) throw notFound(`user: no user "${userName}"`);
    if (!user.entities.includes(entity)) {
      await this.insert('weft_memberships', [{ entity, user_id: user.user_id, removed: 0, version: nextVersion() }]);
      user.entities = [...user.entities, entity].sort();
    }
    return user;
  }

  async removeMember(entity: string, userName: string): Promise<UserInfo> {
    const user = await this.findUser(userName);
    if (!user || !user.entities.includes(entity)) throw notFound(`user: "${userName}" is not a member of "${entity}"`);
    await this.insert('weft_memberships', [{ entity, user_id: user.user_id, removed: 1, version: nextVersion() }]);
    user.entities = user.entities.filter((e) => e !== entity);
    return user;
  }

  // --- keys -----------------------------------------------------------------------------

  async createKey(opts: CreateKeyOptions): Promise<CreatedKey> {
    const entities = [...new Set(opts.entities ?? [])];
    for (const [i, e] of entities.entries()) checkName('entity', e, `entities[${i}]`);
    const user = await this.ensureUser(opts.user, opts.admin ?? false);
    for (const e of entities) {
      await this.createEntity(e, { ifMissing: true });
      if (!user.entities.includes(e)) {
        await this.insert('weft_memberships', [{ entity: e, user_id: user.user_id, removed: 0, version: nextVersion() }]);
        user.entities.push(e);
      }
    }
    const key = opts.key ?? generateApiKey();
    const key_id = newKeyId();
    const row = {
      key_hash: hashApiKey(key),
      key_id,
      user_id: user.user_id,
      name: opts.name ?? '',
      prefix: displayPrefix(key),
      revoked_at: null,
      version: nextVersion(),
    };
    await this.insert('weft_api_keys', [row]);
    return {
      key,
      key_id,
      prefix: row.prefix,
      name: row.name,
      user_id: user.user_id,
      user: user.name,
      is_admin: user.is_admin,
      entities: [...user.entities].sort(),
      created_at: new Date().toISOString(),
      revoked_at: null,
    };
  }

  async listKeys(userName?: string): Promise<KeyInfo[]> {
    const rows = await this.rows<{
      key_id: string;
      prefix: string;
      name: string;
      user_id: string;
      user: string;
      is_admin: number;
      created_at: string;
      revoked_at: string | null;
    }>(
      `SELECT k.key_id AS key_id, k.prefix AS prefix, k.name AS name, k.user_id AS user_id, u.name AS user,
              u.is_admin AS is_admin, toString(k.created_at) AS created_at, toString(k.revoked_at) AS revoked_at
       FROM (SELECT * FROM weft_api_keys FINAL) AS k
       LEFT JOIN (SELECT user_id, name, is_admin FROM weft_users FINAL) AS u ON u.user_id = k.user_id
       WHERE {user:String} = '' OR u.name = {user:String}
       ORDER BY k.created_at, k.key_id`,
      { user: userName ?? '' },
    );
    const out: KeyInfo[] = [];
    const memberships = new Map<string, string[]>();
    for (const r of rows) {
      if (!memberships.has(r.user_id)) memberships.set(r.user_id, await this.membershipsOf(r.user_id));
      out.push({
        ...r,
        is_admin: Number(r.is_admin) === 1,
        entities: memberships.get(r.user_id)!,
        created_at: toIso(r.created_at)!,
        revoked_at: toIso(r.revoked_at),
      });
    }
    return out;
  }

  async revokeKey(keyId: string): Promise<{ key_id: string; revoked_at: string }> {
    const r = await this.rows<{
      key_hash: string;
      key_id: string;
      user_id: string;
      name: string;
      prefix: string;
      created_at: string;
      revoked_at: string | null;
    }>(
      `SELECT key_hash, key_id, user_id, name, prefix, toString(created_at) AS created_at, toString(revoked_at) AS revoked_at
       FROM weft_api_keys FINAL WHERE key_id = {keyId:String}`,
      { keyId },
    );
    const row = r[0];
    if (!row) throw notFound(`key_id: no key "${keyId}"`);
    if (row.revoked_at) return { key_id: keyId, revoked_at: toIso(row.revoked_at)! };
    const now = new Date();
    await this.insert('weft_api_keys', [
      { ...row, revoked_at: now.toISOString().replace('T', ' ').replace('Z', ''), version: nextVersion() },
    ]);
    return { key_id: keyId, revoked_at: now.toISOString() };
  }

  async countActiveKeys(): Promise<number> {
    const r = await this.rows<{ n: number }>('SELECT count() AS n FROM weft_api_keys FINAL WHERE revoked_at IS NULL');
    return Number(r[0]?.n ?? 0);
  }

  /**
   * The caller a presented key stands for, or null (unknown or revoked). The row is found by
   * the key's hash; the hashes are then compared in constant time.
   */
  async lookup(key: string): Promise<Caller | null> {
    const hash = hashApiKey(key);
    const r = await this.rows<{ key_hash: string; key_id: string; user_id: string; name: string; is_admin: number }>(
      `SELECT k.key_hash AS key_hash, k.key_id AS key_id, k.user_id AS user_id, u.name AS name, u.is_admin AS is_admin
       FROM (SELECT key_hash, key_id, user_id FROM weft_api_keys FINAL WHERE key_hash = {hash:String} AND revoked_at IS NULL) AS k
       INNER JOIN (SELECT user_id, name, is_admin FROM weft_users FINAL) AS u ON u.user_id = k.user_id`,
      { hash },
    );
    const row = r[0];
    if (!row || !hashesEqual(row.key_hash, hash)) return null;
    const entities = await this.membershipsOf(row.user_id);
    return {
      userId: row.user_id,
      userName: row.name,
      keyId: row.key_id,
      isAdmin: Number(row.is_admin) === 1,
      entities,
      defaultEntity: entities.includes(row.name) ? row.name : (entities[0] ?? row.name),
    };
  }

  /**
   * Makes `key` exist as an admin key (user `admin`): created when missing, re-activated when
   * revoked. For WEFT_BOOTSTRAP_API_KEY; returns whether anything was written.
   */
  async ensureAdminKey(key: string): Promise<boolean> {
    const hash = hashApiKey(key);
    const r = await this.rows<{ user_id: string; revoked: number }>(
      'SELECT user_id, revoked_at IS NOT NULL AS revoked FROM weft_api_keys FINAL WHERE key_hash = {hash:String}',
      { hash },
    );
    const existing = r[0];
    if (existing && Number(existing.revoked) === 0) {
      const caller = await this.lookup(key);
      if (caller?.isAdmin) return false;
    }
    await this.createKey({ user: 'admin', admin: true, key, name: 'bootstrap' });
    return true;
  }

  /** When no active key exists at all, creates one admin key and returns it (shown once). */
  async createFirstAdminKeyIfNone(): Promise<CreatedKey | null> {
    if ((await this.countActiveKeys()) > 0) return null;
    return this.createKey({ user: 'admin', admin: true, name: 'first admin key' });
  }
}
