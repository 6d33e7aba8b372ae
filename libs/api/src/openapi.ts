import { z } from 'zod';
import { endpoints } from './endpoints';
import { routeSpecs, type RouteName } from './routes';
import type { RouteSpec } from './spec';

const errorBody = {
  type: 'object',
  required: ['status', 'reason'],
  properties: {
    status: { type: 'integer' },
    reason: { type: 'string' },
    field: { type: 'string', description: 'dotted path of the offending request field' },
  },
} as const;

function schemaOf(s: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const js = z.toJSONSchema(s, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as Record<string, unknown>;
  delete js.$schema;
  return js;
}

/**
 * The groups /docs shows, in this order. A route's group comes from its spec (the interface's
 * 20, the extras) or from the `doc` its registration gives; `undocumented` marks a route that
 * gave none (test/routes.test.ts fails on it).
 */
export const ROUTE_TAGS = {
  interface: "The trace-server interface's 20 endpoints (Weave-compatible)",
  extra: "Extra endpoints with a published response: the web UI's, annotation queues",
  sdk: 'Extra endpoints the Weave SDKs call (request schema given; response as the reference)',
  otlp: 'OpenTelemetry: OTLP/HTTP trace export (protobuf or JSON, gzip); OTLP/gRPC is on WEFT_OTLP_GRPC_PORT',
  openai: 'OpenAI-compatible inference front (/v1)',
  mcp: 'Model Context Protocol (Streamable HTTP): the tools coding agents read traces with (docs/mcp.md)',
  admin: 'Keys, users and entities (admin keys only): what `weft keys|entities --url` calls',
  ui: 'The web UI (HTML and its assets)',
  server: 'Liveness, readiness, metrics, this document',
  undocumented: 'Routes registered without a description',
} as const;
export type RouteTag = keyof typeof ROUTE_TAGS;

/** How a route registered outside the spec table describes itself (fastify route `config.doc`). */
export interface RouteDoc {
  tag: RouteTag;
  summary: string;
  /** `none`: no credentials (the shell's probes, the UI's files). Default: Basic or Bearer. */
  auth?: 'any' | 'none';
  /** The request body's media types (POST); JSON when absent. */
  bodyTypes?: readonly string[];
}

/** A route as the server registered it: its spec's name (addRoute), else its doc. */
export interface DocumentedRoute {
  method: string;
  url: string;
  spec?: RouteName;
  doc?: RouteDoc;
}

/** A fastify URL as an OpenAPI path: `:name` and the `*` wildcard become `{name}`, `{path}`. */
export function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}').replace(/\*$/, '{path}');
}

const errorResponses = (jsonSchema: Record<string, unknown>) => {
  const err = (d: string) => ({ description: d, content: { 'application/json': { schema: jsonSchema } } });
  return {
    '400': err('invalid request: the reason names the field'),
    '401': err('missing, malformed, unknown or revoked API key (the reason also in `x-weft-error` and `WWW-Authenticate`)'),
    '403': err("the key's user is not a member of the entity named by a project_id, entity or ref (the reason also in `x-weft-error`)"),
    '404': err('not found'),
    '413': err('request body, a string, an array, a query or a payload too large'),
    '415': err('unsupported Content-Type'),
    '429': err('rate limit of the API key exceeded; retry after the Retry-After header'),
    '503': err('temporarily unable to store the data; retry after the Retry-After header'),
  };
};

const bothSchemes = [{ basicAuth: [] }, { bearerAuth: [] }];

/** The operation of a route of the spec table (the 20 and the extras): request and response schemas from zod. */
function specOperation(name: RouteName, path: string): Record<string, unknown> {
  const spec: RouteSpec = routeSpecs[name];
  const isInterface = name in endpoints;
  const published = !isInterface && spec.published === true && spec.response !== undefined;
  const response = spec.response;
  const okContent: Record<string, unknown> =
    response === undefined
      ? { 'application/json': { schema: {} } }
      : spec.stream === 'jsonl'
        ? { 'application/jsonl': { schema: schemaOf(response, 'output') } }
        : spec.stream === 'sse'
          ? {
              'application/json': { schema: schemaOf(response, 'output') },
              'text/event-stream': {
                schema: { type: 'string', description: 'Server-Sent Events of chat.completion.chunk objects, ending with `data: [DONE]`' },
              },
            }
          : spec.stream === 'file'
            ? Object.fromEntries(
                ['application/jsonl', 'text/csv', 'application/vnd.apache.parquet'].map((type) => [
                  type,
                  { schema: { type: 'string', format: 'binary', description: 'the calls, as the format asked for' } },
                ]),
              )
            : { 'application/json': { schema: schemaOf(response, 'output') } };
  const alias = path !== spec.path;
  return {
    operationId: alias ? `${name}_at_${path.replace(/[^A-Za-z0-9]+/g, '_')}` : name,
    summary: alias ? `${spec.summary} (the same as ${spec.path})` : spec.summary,
    description: `Served by the ${spec.service} role.`,
    tags: [isInterface ? 'interface' : published ? 'extra' : 'sdk'],
    // Either scheme works on every route; the interface's own is listed first.
    security: spec.auth === 'basic' ? bothSchemes : [...bothSchemes].reverse(),
    ...requestOf(spec, path),
    responses: { '200': { description: 'OK', content: okContent }, ...errorResponses(errorBody) },
  };
}

/** A spec route's request: a JSON body (less the path's members), or for GET and DELETE the query string. */
function requestOf(spec: RouteSpec, url: string): Record<string, unknown> {
  const path = openApiPath(url);
  const inPath = new Set([...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!));
  const schema = schemaOf(spec.request, 'input') as { properties?: Record<string, unknown>; required?: string[] };
  if (spec.urlMembers && schema.properties) {
    schema.properties = Object.fromEntries(Object.entries(schema.properties).filter(([name]) => !inPath.has(name)));
    schema.required = schema.required?.filter((name) => !inPath.has(name));
  }
  const params = pathParameters(path).parameters ?? [];
  if (spec.method === 'GET' || spec.method === 'DELETE') {
    const required = new Set(schema.required ?? []);
    const query = Object.entries(schema.properties ?? {}).map(([name, s]) => ({
      name,
      in: 'query',
      required: required.has(name),
      schema: s,
    }));
    return { parameters: [...params, ...query] };
  }
  return {
    ...(params.length ? { parameters: params } : {}),
    requestBody: { required: true, content: { 'application/json': { schema } } },
  };
}

/** The operation of a route described by its registration's `doc`. */
function docOperation(method: string, path: string, doc: RouteDoc | undefined): Record<string, unknown> {
  const d: RouteDoc = doc ?? { tag: 'undocumented', summary: `${method} ${path}` };
  const op: Record<string, unknown> = {
    operationId: `${method.toLowerCase()}_${path.replace(/[^A-Za-z0-9]+/g, '_')}`,
    summary: d.summary,
    tags: [d.tag],
    security: d.auth === 'none' ? [] : bothSchemes,
    ...pathParameters(path),
    responses: { '200': { description: 'OK' }, ...(d.auth === 'none' ? {} : errorResponses(errorBody)) },
  };
  if (method === 'POST') {
    const types = d.bodyTypes ?? ['application/json'];
    op.requestBody = { required: true, content: Object.fromEntries(types.map((t) => [t, { schema: {} }])) };
  }
  return op;
}

function pathParameters(path: string): { parameters?: unknown[] } {
  const names = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
  if (names.length === 0) return {};
  return { parameters: names.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } })) };
}

/**
 * The OpenAPI 3.1 document of every route a server registered: the spec table's from the zod
 * contract, the others from their `doc`. HEAD routes (fastify's twins of GET) are left out.
 */
export function buildOpenApiDocument(opts: {
  version: string;
  serverUrl?: string;
  routes: readonly DocumentedRoute[];
}): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of opts.routes) {
    if (r.method === 'HEAD' || r.method === 'OPTIONS') continue;
    const path = openApiPath(r.url);
    const operation = r.spec ? specOperation(r.spec, r.url) : docOperation(r.method, path, r.doc);
    (paths[path] ??= {})[r.method.toLowerCase()] = operation;
  }
  const used = new Set(Object.values(paths).flatMap((ops) => Object.values(ops).flatMap((o) => (o as { tags: string[] }).tags)));
  return {
    openapi: '3.1.0',
    info: {
      title: 'weft',
      version: opts.version,
      description:
        'Trace, object, table and completion service. Every route takes `Authorization: Basic base64(api:<key>)` or `Authorization: Bearer <key>`.',
    },
    servers: opts.serverUrl ? [{ url: opts.serverUrl }] : undefined,
    tags: (Object.entries(ROUTE_TAGS) as [RouteTag, string][])
      .filter(([t]) => used.has(t))
      .map(([name, description]) => ({ name, description })),
    components: {
      securitySchemes: {
        basicAuth: { type: 'http', scheme: 'basic', description: 'username `api`, password = API key' },
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'the API key' },
      },
    },
    paths,
  };
}
