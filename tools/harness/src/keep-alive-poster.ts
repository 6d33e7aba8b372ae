import { Agent, request } from 'node:http';

/**
 * POSTs over a pool of kept-alive connections with node:http, for the benchmarks' load loops.
 * The load generator shares the machine's cores with the server it measures, so it must cost
 * little: `fetch` (undici's WHATWG layer: streams, Headers, a Response per request) cost ~1 ms
 * more CPU per 130 KB request than node:http on the same machine — ~10 CPU-µs per call of
 * bench:ingest's 100-call requests, taken from the server. Tests keep the `Client` (fetch).
 */
export class KeepAlivePoster {
  private readonly agent: Agent;
  private readonly origin: URL;

  constructor(
    baseUrl: string,
    private readonly headers: Record<string, string>,
    maxSockets = 64,
  ) {
    this.origin = new URL(baseUrl);
    this.agent = new Agent({ keepAlive: true, maxSockets });
  }

  /** POSTs `body` to `path`; resolves with the status and the response's text (any status). */
  post(path: string, body: string | Buffer): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: this.origin.hostname,
          port: this.origin.port,
          path,
          method: 'POST',
          agent: this.agent,
          headers: { ...this.headers, 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
