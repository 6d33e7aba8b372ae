/** A small HTTP client for the tests: real requests over the loopback interface. */
export interface Reply<T = any> {
  status: number;
  body: T;
  headers: Headers;
  text: string;
}

export const basicAuth = (key: string) => `Basic ${Buffer.from(`api:${key}`).toString('base64')}`;
export const bearerAuth = (key: string) => `Bearer ${key}`;

/** The admin key every harness server is started with (WEFT_BOOTSTRAP_API_KEY); the Client's default. */
export const HARNESS_API_KEY = 'test-key';

export class Client {
  constructor(
    readonly baseUrl: string,
    readonly authorization: string | null = basicAuth(HARNESS_API_KEY),
  ) {}

  withAuth(authorization: string | null): Client {
    return new Client(this.baseUrl, authorization);
  }

  /** POST of a body as given (JSON unless `headers` say otherwise). */
  raw(path: string, body: string | Uint8Array, headers: Record<string, string> = {}): Promise<Reply> {
    return this.request('POST', path, body, headers);
  }

  /** A request with any method, as the SDK's httpx client makes it: a JSON Content-Type only with a body. */
  async request(method: string, path: string, body?: string | Uint8Array, headers: Record<string, string> = {}): Promise<Reply> {
    const h: Record<string, string> = { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers };
    if (this.authorization && !('authorization' in h)) h.authorization = this.authorization;
    const res = await fetch(this.baseUrl + path, { method, headers: h, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* not a single JSON document (e.g. JSONL) */
    }
    return { status: res.status, body: parsed, headers: res.headers, text };
  }

  post<T = any>(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Reply<T>> {
    return this.raw(path, JSON.stringify(body), headers) as Promise<Reply<T>>;
  }

  /** POST and parse a JSONL response into its objects; fails on a non-200. */
  async jsonl<T = any>(path: string, body: unknown): Promise<T[]> {
    const r = await this.post(path, body);
    if (r.status !== 200) throw new Error(`${path} → ${r.status}: ${r.text}`);
    return r.text
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as T);
  }
}

/**
 * Announces a body larger than the server takes (by Content-Length) and sends only its first
 * bytes: the server must answer 413 from the header alone, without reading the body.
 */
export async function postOversized(baseUrl: string, path: string, bytes: number, authorization: string): Promise<number> {
  const { request } = await import('node:http');
  const url = new URL(path, baseUrl);
  return new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => (req.destroy(), reject(new Error('no answer to an oversized body'))), 30_000);
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': String(bytes), authorization },
      },
      (res) => {
        clearTimeout(timer);
        res.resume();
        resolve(res.statusCode ?? 0);
        req.destroy();
      },
    );
    req.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code !== 'EPIPE' && e.code !== 'ECONNRESET') {
        clearTimeout(timer);
        reject(e);
      }
    });
    req.write('{"start": "' + ' '.repeat(1024));
  });
}
