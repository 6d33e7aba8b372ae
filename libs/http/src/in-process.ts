import { Socket } from 'node:net';
import type { IncomingMessage } from 'node:http';

/**
 * Whether a request came in-process (fastify's inject, as the MCP tools ask the HTTP routes)
 * rather than over a connection: its socket is a stand-in with no timeouts to set and nothing
 * to destroy, and its body was handed over whole, so the socket-level guards (body idle
 * timeout, draining refused bodies) have nothing to do.
 */
export function inProcess(req: IncomingMessage): boolean {
  return !(req.socket instanceof Socket);
}
