import type { FastifyInstance } from 'fastify';
import { addRoute, type Authenticator } from '@weft/http';
import { addTags, createTableFromDigests, linkDatasetSources, removeAliases, removeTags, setAliases } from '@weft/objects';
import type { Store } from '@weft/store';

export interface Weave054WriteDeps {
  store: Store;
  auth: Authenticator;
}

/** Weave 0.54's writes (libs/api weave054.ts): object aliases and tags, dataset sources, tables from row digests. */
export async function weave054WriteRoutes(app: FastifyInstance, deps: Weave054WriteDeps): Promise<void> {
  const { store, auth } = deps;
  addRoute(app, auth, 'aliasSet', async (b) => {
    await setAliases(store, b.project_id, b.object_id, b.digest, b.aliases);
    return {};
  });
  addRoute(app, auth, 'aliasRemove', async (b) => {
    await removeAliases(store, b.project_id, b.object_id, b.aliases);
    return {};
  });
  addRoute(app, auth, 'tagAdd', async (b) => {
    await addTags(store, b.project_id, b.object_id, b.digest, b.tags);
    return {};
  });
  addRoute(app, auth, 'tagRemove', async (b) => {
    await removeTags(store, b.project_id, b.object_id, b.digest, b.tags);
    return {};
  });
  addRoute(app, auth, 'datasetSourcesLink', async (b, { caller }) => linkDatasetSources(store, b, caller.userId));
  addRoute(app, auth, 'tableCreateFromDigests', async (b) => createTableFromDigests(store, b.project_id, b.row_digests, b.expected_digest));
}
