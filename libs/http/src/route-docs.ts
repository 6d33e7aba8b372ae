import type { FastifyInstance, RouteOptions } from 'fastify';
import { buildOpenApiDocument, type DocumentedRoute, type RouteDoc, type RouteName } from '@weft/api';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The spec table's name of a route registered by addRoute: /openapi.json describes it from the contract. */
    spec?: RouteName;
    /** How a route outside the spec table appears in /openapi.json and /docs. */
    doc?: RouteDoc;
  }
}

/**
 * Every route registered on `app` (and its plugins), kept as registered: /openapi.json is built
 * from them once the server is ready, so it lists exactly what is served. Swagger UI's own
 * routes (`schema.hide`) are left out.
 */
export function collectRoutes(app: FastifyInstance): () => DocumentedRoute[] {
  const seen: RouteOptions[] = [];
  app.addHook('onRoute', (route) => {
    if (!(route.schema as { hide?: boolean } | undefined)?.hide) seen.push(route);
  });
  // Read at the end: a plugin's onRoute hook may still set a route's doc after this one ran.
  return () =>
    seen.flatMap((r) =>
      [r.method].flat().map((method) => ({ method, url: r.url, spec: r.config?.spec, doc: r.config?.doc }) satisfies DocumentedRoute),
    );
}

/** Fills `document` (the object /openapi.json and /docs serve) when the server is ready. */
export function documentWhenReady(
  app: FastifyInstance,
  document: Record<string, unknown>,
  version: string,
  routes: () => DocumentedRoute[],
): void {
  app.addHook('onReady', async () => {
    Object.assign(document, buildOpenApiDocument({ version, routes: routes() }));
  });
}

/**
 * Gives every route registered in `scope` that has no doc of its own this one (e.g. the web UI's
 * pages, whichever paths it adds): /docs then lists them in their group.
 */
export function documentRoutes(scope: FastifyInstance, doc: (url: string) => RouteDoc): void {
  scope.addHook('onRoute', (route) => {
    if (!route.config?.doc && !route.config?.spec) route.config = { ...route.config, doc: doc(route.url) };
  });
}
