/**
 * The MCP tools ask weft's own HTTP API, never the store: an answer is then what the HTTP API
 * answers for the same question, and authentication, tenancy, validation, limits and
 * read-your-writes are the routes' own. How a request travels is the caller's choice (`Send`):
 * in-process (fastify's inject, the query role's /mcp) or over the network (`weft mcp`, stdio).
 */

export interface ApiRequest {
  method: 'GET' | 'POST';
  /** The route's path, with any query string. */
  path: string;
  body?: unknown;
}

export interface ApiResponse {
  status: number;
  text: string;
}

export type Send = (request: ApiRequest) => Promise<ApiResponse>;

/** A refusal of the HTTP API, with its status and reason (`{reason, field?}` bodies). */
export class WeftApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    readonly path: string,
  ) {
    super(`${path} answered ${status}: ${reason}`);
  }
}

export class WeftApi {
  constructor(private readonly send: Send) {}

  /** A JSON route's answer. */
  async post<T>(path: string, body: unknown): Promise<T> {
    return JSON.parse(await this.text('POST', path, body)) as T;
  }

  /** A JSONL stream's lines, parsed (the streams the tools read are bounded by their `limit`). */
  async lines<T>(path: string, body: unknown): Promise<T[]> {
    const text = await this.text('POST', path, body);
    const out: T[] = [];
    for (const line of text.split('\n')) if (line.trim()) out.push(JSON.parse(line) as T);
    return out;
  }

  private async text(method: 'GET' | 'POST', path: string, body: unknown): Promise<string> {
    const r = await this.send({ method, path, body });
    if (r.status >= 400) {
      let reason = r.text.slice(0, 500);
      try {
        const parsed = JSON.parse(r.text) as { reason?: unknown; detail?: unknown; message?: unknown };
        const said = parsed.reason ?? parsed.detail ?? parsed.message;
        if (typeof said === 'string') reason = said;
      } catch {
        // Not JSON: the text itself, cut.
      }
      throw new WeftApiError(r.status, reason, path.split('?')[0]!);
    }
    return r.text;
  }
}

/** `Send` over HTTP to a running weft (the stdio mode), with the key as Bearer. */
export function fetchSend(baseUrl: string, apiKey: string): Send {
  return async ({ method, path, body }) => {
    const res = await fetch(new URL(path, baseUrl), {
      method,
      headers: { authorization: `Bearer ${apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, text: await res.text() };
  };
}
