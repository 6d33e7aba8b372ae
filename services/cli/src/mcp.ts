import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createMcpServer, fetchSend } from '@weft/mcp';
import type { McpCommand } from './commands';

/**
 * `weft mcp`: weft's MCP server over stdio, for clients that only launch local servers (Claude
 * Code's and Cursor's `command` entries). The tools are the /mcp endpoint's, the same code;
 * each reads the running weft's HTTP API at --url with the key, so what a key sees is what the
 * HTTP API lets it see. stdout carries the protocol only; nothing else is written there.
 */
export async function runMcp(cmd: McpCommand): Promise<void> {
  const server = createMcpServer({ send: fetchSend(cmd.url, cmd.apiKey), uiBase: cmd.url });
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = resolve;
    // The client closes our stdin to end the session.
    process.stdin.once('end', resolve);
    process.stdin.once('close', resolve);
  });
  await server.connect(transport);
  process.stderr.write(`weft mcp: serving over stdio, reading ${cmd.url}\n`);
  await closed;
  await server.close();
}
