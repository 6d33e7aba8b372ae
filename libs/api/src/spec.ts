import type { z } from 'zod';
import type { AuthScheme } from '@weft/core';

/** Which service owns an endpoint (the front proxy routes by this in distributed mode). */
export type ServiceName = 'gateway' | 'query' | 'inference';

/** A route of the interface's 20 (endpoints.ts): its response is always written down. */
export interface EndpointSpec {
  path: string;
  summary: string;
  auth: AuthScheme;
  service: ServiceName;
  request: z.ZodType;
  /** For JSON responses, the body; for streams, the shape of one JSONL line. */
  response: z.ZodType;
  /** `jsonl`: the response is a stream of JSON objects, one per line. `sse`: may be Server-Sent Events. `file`: a download (JSONL, CSV or Parquet). */
  stream?: 'jsonl' | 'sse' | 'file';
  /** Other paths answering the same (e.g. without the trailing slash); not in /openapi.json. */
  aliases?: readonly string[];
  /**
   * `heavy`: the engine's heavy lane (analytics, exports, aggregates: its own connections, fewer
   * threads, lower priority) and the per-project/per-key cap on heavy requests. Absent: interactive.
   */
  lane?: 'heavy';
}

/**
 * What addRoute reads of a route's spec: the interface's 20 and every other route (the domain
 * files' `…RouteSpecs`, listed together in routes.ts) fit it. Beyond the 20, a route may leave
 * its response unwritten, be published in /openapi.json, and take another method or URL members.
 */
export type RouteSpec = Omit<EndpointSpec, 'response'> & {
  /** The response body's schema (handlers are typed by it); absent: not yet written down. */
  response?: z.ZodType;
  /** Listed in /openapi.json (tagged `extra`); needs `response`. */
  published?: boolean;
  /** The HTTP method; POST when absent. GET and DELETE have no body: the query string is the request. */
  method?: 'GET' | 'PUT' | 'DELETE';
  /** The path's parameters and the query string are members of the request (the reference's REST routes). */
  urlMembers?: true;
};
