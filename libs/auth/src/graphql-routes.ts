import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { parseBody } from '@weft/api';
import type { Caller } from '@weft/core';
import type { KeyStoreAuthenticator } from './authenticator';

/**
 * The few operations of W&B's GraphQL API that the Weave SDK sends while `weave.init` runs
 * (at `{WANDB_BASE_URL}/graphql`), answered from weft's own keys and entities so that
 * `WANDB_BASE_URL=<weft>` alone is enough. Operations are recognised by name; nothing else of
 * W&B's API is served (any other operation is a GraphQL error). Projects need no creation in
 * weft: a project exists as soon as its entity is one of the caller's.
 */
export const GRAPHQL_OPERATIONS = ['DefaultEntity', 'Project', 'UpsertModel', 'ServerInfo', 'Entity'] as const;

const graphqlRequest = z.object({
  query: z.string().min(1),
  operationName: z.string().nullish(),
  variables: z.record(z.string(), z.unknown()).nullish(),
});

/** The reference's code for "not yours": its SDK turns it into a clear permission message. */
const PERMISSION_ERROR = 'PERMISSION_ERROR';

type GraphqlAnswer = { data: Record<string, unknown> | null; errors?: { message: string; extensions?: Record<string, unknown> }[] };

export interface GraphqlDeps {
  auth: KeyStoreAuthenticator;
}

export async function graphqlRoutes(app: FastifyInstance, deps: GraphqlDeps): Promise<void> {
  const authenticate = async (request: FastifyRequest) => {
    request.caller = await deps.auth.authenticateAny(request.headers.authorization);
    await app.weftRateLimit.check(request.caller);
  };
  const doc = { tag: 'sdk', summary: 'The W&B GraphQL operations weave.init asks (viewer, entity, project)' } as const;
  app.post('/graphql', { onRequest: authenticate, config: { doc } }, async (request) => {
    const body = parseBody(graphqlRequest, request.body);
    return answerGraphql(request.caller!, operationOf(body.query, body.operationName), body.variables ?? {});
  });
}

/** The operation's name: `operationName`, else the first `query|mutation <Name>` of the document. */
export function operationOf(query: string, operationName?: string | null): string | null {
  if (operationName) return operationName;
  return /\b(?:query|mutation)\s+([_A-Za-z][_0-9A-Za-z]*)/.exec(query)?.[1] ?? null;
}

export function answerGraphql(caller: Caller, operation: string | null, variables: Record<string, unknown>): GraphqlAnswer {
  const defaultEntity = caller.defaultEntity ?? caller.entities[0] ?? null;
  const canUse = (entity: unknown) => typeof entity === 'string' && entity !== '' && (caller.isAdmin || caller.entities.includes(entity));
  const denied = (entity: unknown): GraphqlAnswer => ({
    data: null,
    errors: [{ message: `no access to entity '${String(entity)}' with this key`, extensions: { code: PERMISSION_ERROR } }],
  });
  // `username` is the key's user name, the one display name (the SDK prints it: "Logged in as
  // Weights & Biases user: <name>"); `id` is the user id weft stamps as `svc_user_id`.
  const viewer = { id: caller.userId, username: caller.userName ?? caller.userId };
  switch (operation) {
    case 'DefaultEntity':
      return { data: { viewer: { ...viewer, defaultEntity: defaultEntity ? { name: defaultEntity } : null } } };
    case 'Entity':
      return { data: { viewer, entity: canUse(variables.entityName) ? { readOnly: false } : null } };
    case 'ServerInfo':
      return { data: { serverInfo: { frontendHost: null } } };
    case 'Project': {
      const entity = variables.entityName;
      if (!canUse(entity)) return denied(entity);
      return { data: { project: { name: String(variables.name ?? '') } } };
    }
    case 'UpsertModel': {
      const entity = variables.entity ?? defaultEntity;
      if (!canUse(entity)) return denied(entity);
      return { data: { upsertModel: { model: { name: String(variables.name ?? ''), description: variables.description ?? null } } } };
    }
    default:
      return {
        data: null,
        errors: [
          {
            message: `weft answers only the GraphQL operations ${GRAPHQL_OPERATIONS.join(', ')} (got ${operation ?? 'an unnamed operation'})`,
          },
        ],
      };
  }
}
