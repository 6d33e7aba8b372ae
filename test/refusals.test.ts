import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAuth } from './helpers/client';
import { createKey } from './helpers/keys';
import { useWeft } from './helpers/fixture';
import { HARNESS_API_KEY } from './helpers/client';
import { curlPost, fetchPost, goPost, nodeHttpPost, pythonPost, type ClientOutcome } from './helpers/refusal-clients';

// Refusals decided before the body is read (413 by Content-Length, 503 by admission, 429 by the
// key's rate limit) must reach the stock clients as a status, not as EPIPE/ECONNRESET: weft
// answers, then reads and discards the body (within a bound) before closing.
const LIMIT = 32 * 1024 * 1024;
// Bodies far larger than the loopback socket buffers, so a client is still sending when the
// answer comes: over the limit for the 413, under it (so the 413 does not come first) for the others.
const OVER = 40 * 1024 * 1024;
/** Under overload (503, 429) only bodies up to OVERLOAD_DRAIN_MAX_BYTES are drained: a body just under it. */
const OVERLOADED_BODY = 60 * 1024;
const RATE = 30;

const { weft, api } = useWeft({
  env: {
    WEFT_BODY_LIMIT_BYTES: String(LIMIT),
    WEFT_MAX_INFLIGHT_BODY_BYTES: String(LIMIT),
    WEFT_RATE_LIMIT_MAX: String(RATE),
    WEFT_RATE_LIMIT_WINDOW_MS: '600000',
    // Room for several 40 MiB drains at once: fetch and Go return with the answer while their
    // upload still runs, so the next try may start beside it (the bound itself: libs/http/test/refused-body.test.ts).
    WEFT_REFUSED_BODY_DRAIN_BYTES: String(256 * 1024 * 1024),
    // The held request below stays open for the whole 503 block.
    WEFT_BODY_IDLE_TIMEOUT_MS: '600000',
    WEFT_REQUEST_TIMEOUT_MS: '600000',
  },
});
const admin = basicAuth(HARNESS_API_KEY);
const url = () => `${weft.url}/call/start`;

type Client = { name: string; post: (url: string, bytes: number, auth: string) => Promise<ClientOutcome> };
const CLIENTS: Client[] = [
  { name: 'Python http.client', post: (u, b, a) => pythonPost('http.client', u, b, a) },
  { name: 'Python requests', post: (u, b, a) => pythonPost('requests', u, b, a) },
  { name: 'Python httpx', post: (u, b, a) => pythonPost('httpx', u, b, a) },
  { name: 'Node fetch (undici)', post: fetchPost },
  { name: 'Node http.request', post: nodeHttpPost },
  { name: 'Go net/http', post: goPost },
  { name: 'curl without Expect', post: (u, b, a) => curlPost(u, b, a, false) },
  { name: 'curl with Expect: 100-continue', post: (u, b, a) => curlPost(u, b, a, true) },
];

/** Three tries each: the failure this guards against was a race (6 of 6 and 3 of 4 tries). */
async function expectReadable(client: Client, auth: string, bytes: number, status: number, retryAfter: RegExp | null): Promise<void> {
  for (let i = 0; i < 3; i++) {
    const outcome = await client.post(url(), bytes, auth);
    expect(outcome, `${client.name}, try ${i + 1}`).toMatchObject({ status });
    if (retryAfter) expect((outcome as { retry_after: string }).retry_after, client.name).toMatch(retryAfter);
  }
}

describe('413 over WEFT_BODY_LIMIT_BYTES', () => {
  for (const client of CLIENTS) {
    it(`${client.name} reads the 413`, async () => expectReadable(client, admin, OVER, 413, null), 300_000);
  }

  it('the connection stays usable after a drained refusal', async () => {
    // Node's http.Agent with keep-alive: the refusal, then a normal call on the same socket.
    const { request, Agent } = await import('node:http');
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const sockets = new Set<unknown>();
    const post = (body: Buffer) =>
      new Promise<number>((resolve, reject) => {
        const req = request(
          url(),
          {
            method: 'POST',
            agent,
            headers: { 'content-type': 'application/json', authorization: admin, 'content-length': String(body.length) },
          },
          (res) => {
            sockets.add(req.socket);
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    expect(await post(Buffer.alloc(OVER, 0x20))).toBe(413);
    const ok = Buffer.from(JSON.stringify({ start: { project_id: 'acme/refusals', op_name: 'o', started_at: '2024-06-01T00:00:00Z' } }));
    expect(await post(ok)).toBe(200);
    expect(sockets.size).toBe(1);
    agent.destroy();
  });
});

describe('503 under admission', () => {
  // One admitted request holding all of WEFT_MAX_INFLIGHT_BODY_BYTES: its body never completes.
  let held: Socket;
  beforeAll(async () => {
    held = connect(weft.port, '127.0.0.1');
    await new Promise((resolve) => held.once('connect', resolve));
    held.write(
      `POST /call/start HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: ${admin}\r\nContent-Length: ${LIMIT}\r\n\r\n{"start":`,
    );
    // Admitted once the server counts it: then any other body is refused.
    for (let i = 0; i < 100; i++) {
      const r = await api.raw('/call/start', '{}');
      if (r.status === 503) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error('the held request was never admitted');
  });
  afterAll(async () => {
    held?.destroy();
    // The server frees the held request's bytes once it sees the socket close: wait for it, so
    // the next block is not refused by this one's admission.
    for (let i = 0; i < 200; i++) {
      if ((await api.raw('/call/start', '{}')).status !== 503) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });

  for (const client of CLIENTS) {
    it(
      `${client.name} reads the 503 and its Retry-After`,
      async () => expectReadable(client, admin, OVERLOADED_BODY, 503, /^\d+$/),
      300_000,
    );
  }
});

describe('429 over the rate limit', () => {
  let auth: string;
  beforeAll(async () => {
    const key = await createKey(api, 'limited', ['acme']);
    auth = basicAuth(key.key);
    for (let i = 0; i < RATE; i++) await api.withAuth(auth).post('/calls/query_stats', { project_id: 'acme/refusals' });
  });

  for (const client of CLIENTS) {
    it(
      `${client.name} reads the 429 and its Retry-After`,
      async () => expectReadable(client, auth, OVERLOADED_BODY, 429, /^\d+$/),
      300_000,
    );
  }
});

describe('draining is bounded', () => {
  it('a refused body over the drain bound is not read: the answer still comes, then the connection closes', async () => {
    // Announce far more than WEFT_REFUSED_BODY_DRAIN_BYTES: weft answers from the headers and closes.
    const socket = connect(weft.port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    let text = '';
    socket.on('data', (d) => (text += d));
    socket.on('error', () => {});
    socket.write(
      `POST /call/start HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: ${admin}\r\nContent-Length: ${2 ** 40}\r\n\r\n`,
    );
    await new Promise((resolve) => socket.once('close', resolve));
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    expect(text.toLowerCase()).toContain('connection: close');
  });
});
