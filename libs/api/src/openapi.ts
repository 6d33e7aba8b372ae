import { z } from 'zod';
import { endpoints, type EndpointSpec } from './endpoints';
import { publishedExtraEndpoints } from './extra-endpoints';

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

/** OpenAPI 3.1 document generated from the zod contract. */
export function buildOpenApiDocument(opts: { version: string; serverUrl?: string }): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  // The 20 endpoints of the interface, then the extras marked `published` (tagged `extra`).
  const published: [string, EndpointSpec, string[]][] = (Object.entries(endpoints) as [string, EndpointSpec][]).map(([n, s]) => [
    n,
    s,
    [s.service],
  ]);
  for (const [name, spec] of publishedExtraEndpoints()) published.push([name, spec, [spec.service, 'extra']]);
  for (const [name, spec, tags] of published) {
    const okContent: Record<string, unknown> =
      spec.stream === 'jsonl'
        ? { 'application/jsonl': { schema: schemaOf(spec.response, 'output') } }
        : spec.stream === 'sse'
          ? {
              'application/json': { schema: schemaOf(spec.response, 'output') },
              'text/event-stream': {
                schema: { type: 'string', description: 'Server-Sent Events of chat.completion.chunk objects, ending with `data: [DONE]`' },
              },
            }
          : { 'application/json': { schema: schemaOf(spec.response, 'output') } };
    const err = (d: string) => ({ description: d, content: { 'application/json': { schema: errorBody } } });
    paths[spec.path] = {
      post: {
        operationId: name,
        summary: spec.summary,
        tags,
        security: [spec.auth === 'basic' ? { basicAuth: [] } : { bearerAuth: [] }],
        requestBody: { required: true, content: { 'application/json': { schema: schemaOf(spec.request, 'input') } } },
        responses: {
          '200': { description: 'OK', content: okContent },
          '400': err('invalid request: the reason names the field'),
          '401': err('missing, malformed, unknown or revoked API key'),
          '403': err("the key's user is not a member of the entity named by a project_id, entity or ref"),
          '404': err('not found'),
          '413': err('request body, a string, an array, a query or a payload too large'),
          '415': err('the body is not application/json'),
          '429': err('rate limit of the API key exceeded; retry after the Retry-After header'),
          '503': err('temporarily unable to store the data; retry after the Retry-After header'),
        },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'weft',
      version: opts.version,
      description: 'Trace, object, table and completion service. Every operation is a POST with a JSON body.',
    },
    servers: opts.serverUrl ? [{ url: opts.serverUrl }] : undefined,
    components: {
      securitySchemes: {
        basicAuth: { type: 'http', scheme: 'basic', description: 'username `api`, password = API key' },
        bearerAuth: { type: 'http', scheme: 'bearer' },
      },
    },
    paths,
  };
}
