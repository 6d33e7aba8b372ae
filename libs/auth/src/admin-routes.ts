import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { parseBody } from '@weft/api';
import { forbidden, type Caller } from '@weft/core';
import type { KeyStoreAuthenticator } from './authenticator';
import type { KeyStore } from './key-store';

export interface AdminDeps {
  keys: KeyStore;
  auth: KeyStoreAuthenticator;
}

/** Admin operations as POST + JSON, like the interface; paths and bodies of each. */
export const adminSchemas = {
  '/admin/entities/create': z.object({ name: z.string().min(1) }),
  '/admin/entities/list': z.object({}),
  '/admin/entities/add_member': z.object({ entity: z.string().min(1), user: z.string().min(1) }),
  '/admin/entities/remove_member': z.object({ entity: z.string().min(1), user: z.string().min(1) }),
  '/admin/keys/create': z.object({
    user: z.string().min(1),
    admin: z.boolean().default(false),
    entities: z.array(z.string().min(1)).max(1000).default([]),
    name: z.string().max(200).optional(),
  }),
  '/admin/keys/list': z.object({ user: z.string().min(1).optional() }),
  '/admin/keys/revoke': z.object({ key_id: z.string().min(1) }),
} as const;
export type AdminPath = keyof typeof adminSchemas;

/**
 * Runs one admin operation against the store. Shared by the HTTP endpoints (a running server)
 * and the CLI (direct store access when no server runs).
 */
export async function runAdmin(keys: KeyStore, path: AdminPath, input: unknown): Promise<unknown> {
  switch (path) {
    case '/admin/entities/create':
      return keys.createEntity(parseBody(adminSchemas[path], input).name);
    case '/admin/entities/list':
      return { entities: await keys.listEntities() };
    case '/admin/entities/add_member': {
      const b = parseBody(adminSchemas[path], input);
      return keys.addMember(b.entity, b.user);
    }
    case '/admin/entities/remove_member': {
      const b = parseBody(adminSchemas[path], input);
      return keys.removeMember(b.entity, b.user);
    }
    case '/admin/keys/create': {
      const b = parseBody(adminSchemas[path], input);
      return keys.createKey({ user: b.user, admin: b.admin, entities: b.entities, name: b.name });
    }
    case '/admin/keys/list':
      return { keys: await keys.listKeys(parseBody(adminSchemas[path], input).user) };
    case '/admin/keys/revoke':
      return keys.revokeKey(parseBody(adminSchemas[path], input).key_id);
  }
}

/** What each admin endpoint does, for /docs (the same operations as `weft keys|entities`). */
const ADMIN_SUMMARIES: Record<AdminPath, string> = {
  '/admin/keys/create': 'Create an API key (shown once); its user and entities are created when missing',
  '/admin/keys/list': 'List keys (never the keys themselves)',
  '/admin/keys/revoke': 'Revoke a key',
  '/admin/entities/create': 'Create an entity (team)',
  '/admin/entities/list': 'List entities and their members',
  '/admin/entities/add_member': 'Make a user a member of an entity',
  '/admin/entities/remove_member': 'Remove a user from an entity',
};

/**
 * Admin endpoints (outside the interface's 20): what `weft keys|entities` calls while a
 * server holds the store. Admin keys only; Basic or Bearer. Every change clears this
 * process's authentication cache, so a revoked key stops working here at once.
 */
export async function adminRoutes(app: FastifyInstance, deps: AdminDeps): Promise<void> {
  const authenticate = async (request: FastifyRequest) => {
    const caller: Caller = await deps.auth.authenticateAny(request.headers.authorization);
    request.caller = caller;
    if (!caller.isAdmin) throw forbidden('admin endpoints need an admin key');
    await app.weftRateLimit.check(caller);
  };
  for (const path of Object.keys(adminSchemas) as AdminPath[]) {
    const doc = { tag: 'admin', summary: ADMIN_SUMMARIES[path] } as const;
    app.post(path, { onRequest: authenticate, config: { doc } }, async (request) => {
      const result = await runAdmin(deps.keys, path, request.body);
      if (!path.endsWith('/list')) deps.auth.invalidate();
      return result;
    });
  }
}
