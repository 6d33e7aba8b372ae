/**
 * One ClickHouse engine (chDB, persistent under argv[2]) behind the part of ClickHouse's HTTP
 * interface that @clickhouse/client speaks, so that several weft processes can share one store
 * as they share a ClickHouse server in production (the standalone mains with CLICKHOUSE_URL).
 * Only for tests and benchmarks on a machine without a ClickHouse server (Debian's is 2018's
 * 18.16, too old for the schema; no registry ships a current one): the SQL, the storage, the
 * merges and the errors are the engine's own; this file only carries them over HTTP.
 *
 *   GET  /ping                      → "Ok."
 *   POST /?query=INSERT …&…  body   → the body is the INSERT's data (raw, in its FORMAT; binary ones by file)
 *   POST /?param_x=…&<settings>      body = the statement; the answer is its output
 *
 * URL settings apply per request: each distinct set gets its own engine connection with those
 * settings SET once (chDB keeps SET per connection), so one caller's settings never leak into
 * another's statements. An error answers 500 with ClickHouse's own "Code: N. DB::Exception: …".
 */
import { createServer, type IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { mkdirSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';

const require = createRequire(import.meta.url);
const chdbMain = require.resolve('chdb');
type Raw = { bytes?: Uint8Array; rowsRead?: number; bytesRead?: number; rowsWritten?: number; bytesWritten?: number; elapsed?: number };
interface Native {
  QueryAsyncConnection(connection: unknown, sql: string, format: string, params?: Record<string, string>): Promise<Raw>;
  InsertRawAsyncConnection(connection: unknown, prefix: string, payload: Buffer, lineDelimited: boolean): Promise<Raw>;
}
// The package's own Session (connection lifetime, cleanup) and its native binding, which takes
// query parameters as the engine's text form: exactly what arrives as `param_x` over HTTP.
const { Session } = require('chdb') as { Session: new (path: string) => { connection: unknown; close(): void } };
const native = (require(join(dirname(chdbMain), 'dist', 'loader.js')) as { loadNative(): Native }).loadNative();

const dataDir = resolve(process.argv[2] ?? '.', 'clickhouse');
mkdirSync(dataDir, { recursive: true });

/** Parameters of ClickHouse's HTTP interface that are not settings. */
const NOT_SETTINGS = new Set(['query', 'query_id', 'database', 'session_id', 'default_format', 'user', 'password', 'role']);
/** Settings of the HTTP layer only (the embedded engine refuses them; they change nothing here). */
const HTTP_ONLY = new Set([
  'wait_end_of_query',
  'send_progress_in_http_headers',
  'enable_http_compression',
  'http_headers_progress_interval_ms',
  'http_zlib_compression_level',
]);
const LINE_FORMATS = /^(TabSeparated|TSV|JSONEachRow|JSONCompactEachRow|JSONStringsEachRow|CSV)\b/i;

const sessions = new Map<string, Promise<{ connection: unknown }>>();
function sessionFor(settings: [string, string][]): Promise<{ connection: unknown }> {
  const key = JSON.stringify(settings);
  let s = sessions.get(key);
  if (!s) {
    s = (async () => {
      const session = new Session(dataDir);
      for (const [k, v] of settings) {
        if (!/^\w+$/.test(k)) throw new Error(`Code: 115. DB::Exception: Unknown setting ${k}. (UNKNOWN_SETTING)`);
        await native.QueryAsyncConnection(
          session.connection,
          `SET ${k} = '${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`,
          'TabSeparated',
        );
      }
      return session;
    })();
    sessions.set(key, s);
    s.catch(() => sessions.delete(key));
  }
  return s;
}

let nextFile = 0;
async function insertFromFile(connection: unknown, insert: string, payload: Buffer): Promise<Raw> {
  const path = join(dataDir, '..', `insert-${nextFile++}.bin`);
  await writeFile(path, payload);
  try {
    const sql = insert.replace(/\bFORMAT\s+\w+\s*$/i, (f) => `FROM INFILE '${path.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}' ${f}`);
    return await native.QueryAsyncConnection(connection, sql, 'TabSeparated');
  } finally {
    await rm(path, { force: true });
  }
}

async function body(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

// ClickHouse takes URLs up to 1 MiB (http_max_uri_size); query parameters travel in the URL.
const server = createServer({ maxHeaderSize: 1 << 20 }, (req, res) => {
  void (async () => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/ping' || (req.method === 'GET' && url.pathname === '/' && !url.searchParams.has('query'))) {
      res.end('Ok.\n');
      return;
    }
    const settings: [string, string][] = [];
    const params: Record<string, string> = {};
    for (const [k, v] of url.searchParams) {
      if (k.startsWith('param_')) params[k.slice('param_'.length)] = v;
      else if (!NOT_SETTINGS.has(k) && !HTTP_ONLY.has(k)) settings.push([k, v]);
    }
    settings.sort(([a], [b]) => a.localeCompare(b));
    const format = url.searchParams.get('default_format') ?? 'TabSeparated';
    const payload = await body(req);
    const { connection } = await sessionFor(settings);
    const inUrl = url.searchParams.get('query');
    let out: Raw;
    if (inUrl !== null && /^\s*INSERT\b/i.test(inUrl) && payload.length > 0) {
      const fmt = /\bFORMAT\s+(\w+)\s*$/i.exec(inUrl)?.[1] ?? '';
      if (LINE_FORMATS.test(fmt)) out = await native.InsertRawAsyncConnection(connection, inUrl.trim(), payload, true);
      // Data after the statement ends at a blank line, which binary bodies hold: those go through a file.
      else out = await insertFromFile(connection, inUrl.trim(), payload);
    } else {
      const sql = inUrl !== null ? `${inUrl}\n${payload.toString('utf8')}` : payload.toString('utf8');
      out = Object.keys(params).length
        ? await native.QueryAsyncConnection(connection, sql, format, params)
        : await native.QueryAsyncConnection(connection, sql, format);
    }
    res.setHeader(
      'X-ClickHouse-Summary',
      JSON.stringify({
        read_rows: String(out.rowsRead ?? 0),
        read_bytes: String(out.bytesRead ?? 0),
        written_rows: String(out.rowsWritten ?? 0),
        written_bytes: String(out.bytesWritten ?? 0),
      }),
    );
    res.end(out.bytes ? Buffer.from(out.bytes.buffer, out.bytes.byteOffset, out.bytes.byteLength) : undefined);
  })().catch((e: unknown) => {
    const message = e instanceof Error ? e.message : String(e);
    const code = /^Code: (\d+)\./.exec(message)?.[1];
    if (!res.headersSent) {
      res.statusCode = 500;
      if (code) res.setHeader('X-ClickHouse-Exception-Code', code);
    }
    res.end(message.startsWith('Code:') ? message : `Code: 1000. DB::Exception: ${message}. (STD_EXCEPTION)`);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const address = server.address() as { port: number };
  process.stdout.write(`${JSON.stringify({ msg: 'listening', port: address.port, dataDir })}\n`);
});
const stop = () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
