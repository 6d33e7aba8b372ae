import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { authenticateHook, type Authenticator } from '@weft/http';
import { createMcpServer, type Send } from '@weft/mcp';

/** A JSON-RPC message is small; a tool's arguments are bounded by its schema. */
const MCP_BODY_LIMIT = 1024 * 1024;

export interface McpRouteDeps {
  auth: Authenticator;
}

/**
 * `/mcp`: weft's MCP server over the Streamable HTTP transport, stateless (a server and a
 * transport per request, no session kept: any query process can answer any request, as for
 * every other route). The key is authenticated here as on every route; each tool then asks
 * weft's own HTTP routes in-process (fastify's inject) with the caller's Authorization header,
 * so tenancy, validation, limits and answers are exactly the HTTP API's.
 */
export async function mcpRoutes(app: FastifyInstance, deps: McpRouteDeps): Promise<void> {
  const authenticate = authenticateHook(app, deps.auth, 'bearer');
  // The transport wants the JSON-RPC message as plain JSON (the shell's parser keeps big
  // numbers lossless, for stored data); in this scope only.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: MCP_BODY_LIMIT }, (_request, text, done) => {
    try {
      done(null, JSON.parse(text as string));
    } catch (e) {
      done(Object.assign(e as Error, { statusCode: 400 }), undefined);
    }
  });

  const handle = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const authorization = request.headers.authorization ?? '';
    const send: Send = async ({ method, path, body }) => {
      // A query process of the distributed deployment has no gateway routes (the writes): say so
      // plainly rather than fastify's "Route … not found".
      if (!app.hasRoute({ method, url: path.split('?')[0]! }))
        return {
          status: 501,
          text: JSON.stringify({
            reason: `this query process does not serve ${path} (the gateway role does): use \`weft mcp --url <front proxy>\` for it (docs/mcp.md)`,
          }),
        };
      const r = await app.inject({
        method,
        url: path,
        headers: { authorization, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      });
      return { status: r.statusCode, text: r.body };
    };
    // Links into the UI at the address the client reached (the query role serves the UI).
    const server = createMcpServer({ send, uiBase: `${request.protocol}://${request.host}` });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    // The transport writes the response itself.
    reply.hijack();
    reply.raw.once('close', () => {
      // Closing a finished request's server cannot fail in a way anyone could act on.
      transport.close().catch(() => undefined);
      server.close().catch(() => undefined);
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    } catch (err) {
      // The reply is hijacked: fastify's error handler cannot answer, so answer here.
      request.log.error({ err, reqId: request.id }, 'MCP request failed');
      if (!reply.raw.headersSent) {
        reply.raw.writeHead(500, { 'content-type': 'application/json' });
        reply.raw.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: 'internal error' } }));
      } else reply.raw.destroy();
    }
  };

  const doc = (summary: string) => ({ tag: 'mcp' as const, summary });
  // A tool call runs several reads: no whole-request deadline here, each inner request keeps its own.
  app.route({
    method: 'POST',
    url: '/mcp',
    onRequest: authenticate,
    config: { doc: doc('MCP (Streamable HTTP): JSON-RPC requests'), streaming: true },
    handler: handle,
  });
  // Stateless: no server-sent stream and no session to end; the transport answers 405 as the protocol says.
  app.route({
    method: 'GET',
    url: '/mcp',
    onRequest: authenticate,
    config: { doc: doc('MCP: no server-initiated stream (405)'), streaming: true },
    handler: handle,
  });
  app.route({
    method: 'DELETE',
    url: '/mcp',
    onRequest: authenticate,
    config: { doc: doc('MCP: no session to end (405)'), streaming: true },
    handler: handle,
  });
}
