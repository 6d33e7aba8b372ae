import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createLogger } from '@weft/core';
import { createHttpServer, defaultRequestLimits, type RequestLimits } from '../src/index';

// The bodies of refused requests on a real HTTP server and raw sockets, so what is on the wire
// (100 Continue, Connection: close, the socket closing) is what is checked.
const log = createLogger('silent');
let app: FastifyInstance | null = null;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await app?.close();
  app = null;
});

const BODY_LIMIT = 1024;

async function serve(limits: Partial<RequestLimits>): Promise<number> {
  app = await createHttpServer({ log, bodyLimitBytes: BODY_LIMIT, version: 'test', limits: { ...defaultRequestLimits, ...limits } });
  app.post('/echo', async (request) => ({ got: request.body }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  return (app.server.address() as { port: number }).port;
}

/** A raw connection collecting what the server sends, and whether it closed. */
async function open(port: number) {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  await new Promise((resolve) => socket.once('connect', resolve));
  const state = { text: '', closed: false };
  socket.on('data', (d) => (state.text += d));
  socket.on('error', () => {});
  socket.on('close', () => (state.closed = true));
  return { socket, state };
}

const until = async (what: string, cond: () => boolean, ms = 5_000) => {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`never: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

const head = (length: number | 'chunked', extra = '') =>
  `POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${
    length === 'chunked' ? 'Transfer-Encoding: chunked' : `Content-Length: ${length}`
  }\r\n${extra}\r\n`;

describe('refused bodies', () => {
  it('answers 413 from the Content-Length, drains the body, and serves the next request on the same connection', async () => {
    const port = await serve({ refusedBodyDrainBytes: 1 << 20 });
    const { socket, state } = await open(port);
    socket.write(head(100_000));
    await until('the 413', () => state.text.includes('\r\n\r\n{'));
    expect(state.text).toMatch(/^HTTP\/1\.1 413 /);
    expect(state.text.toLowerCase()).not.toContain('connection: close');
    expect(app!.weftRefusedBodies.drainingBytes).toBe(100_000);
    socket.write(Buffer.alloc(100_000, 0x20));
    await until('drained', () => app!.weftRefusedBodies.drainingBytes === 0);
    state.text = '';
    socket.write(head(7) + '{"a":1}');
    await until('the answer', () => state.text.includes('"got"'));
    expect(state.text).toMatch(/^HTTP\/1\.1 200 /);
    expect(state.closed).toBe(false);
  });

  it('closes at once, unread, a refused body the drain bound has no room for; room comes back when drains end', async () => {
    const port = await serve({ refusedBodyDrainBytes: 150_000 });
    const first = await open(port);
    first.socket.write(head(100_000));
    await until('first refused', () => first.state.text.includes('413'));
    expect(app!.weftRefusedBodies.drainingBytes).toBe(100_000);
    // 100,000 + 100,000 > 150,000: this one is not drained.
    const second = await open(port);
    second.socket.write(head(100_000));
    await until('second closed', () => second.state.closed);
    expect(second.state.text).toMatch(/^HTTP\/1\.1 413 /);
    expect(second.state.text.toLowerCase()).toContain('connection: close');
    first.socket.write(Buffer.alloc(100_000, 0x20));
    await until('first drained', () => app!.weftRefusedBodies.drainingBytes === 0);
    const third = await open(port);
    third.socket.write(head(100_000));
    await until('third refused', () => third.state.text.includes('413'));
    expect(third.state.text.toLowerCase()).not.toContain('connection: close');
  });

  it("frees a drain's bytes at once when its client leaves mid-body", async () => {
    const port = await serve({ refusedBodyDrainBytes: 1 << 20 });
    const { socket, state } = await open(port);
    socket.write(head(100_000) + ' '.repeat(10));
    await until('refused', () => state.text.includes('413'));
    expect(app!.weftRefusedBodies.drainingBytes).toBe(100_000);
    socket.destroy();
    await until('freed', () => app!.weftRefusedBodies.drainingBytes === 0, 1_000);
  });

  it('cuts a drain at its deadline and frees its bytes', async () => {
    const port = await serve({ refusedBodyDrainBytes: 1 << 20, refusedBodyDrainMs: 300 });
    const { socket, state } = await open(port);
    socket.write(head(100_000) + ' '.repeat(10));
    await until('refused', () => state.text.includes('413'));
    await until('cut', () => state.closed, 3_000);
    expect(app!.weftRefusedBodies.drainingBytes).toBe(0);
  });

  it('counts a chunked body as it comes, and cuts it past the bound', async () => {
    const port = await serve({ refusedBodyDrainBytes: 50_000, maxInflightRequests: 1 });
    // One request held in flight (its body never ends), so the next is refused by admission.
    const held = await open(port);
    held.socket.write(head(500) + '{');
    await until('held admitted', () => app!.weftAdmission.snapshot().requests === 1);
    const { socket, state } = await open(port);
    socket.write(head('chunked'));
    await until('refused', () => state.text.includes('503'));
    expect(state.text).toMatch(/retry-after: 1/i);
    const chunk = (n: number) => `${n.toString(16)}\r\n${' '.repeat(n)}\r\n`;
    socket.write(chunk(20_000));
    await until('counted', () => app!.weftRefusedBodies.drainingBytes >= 20_000);
    expect(state.closed).toBe(false);
    socket.write(chunk(40_000));
    await until('cut past the bound', () => state.closed);
    expect(app!.weftRefusedBodies.drainingBytes).toBe(0);
  });

  it('Expect: 100-continue — a refused request gets its answer and no 100 (it sends no body); an admitted one gets 100', async () => {
    const port = await serve({});
    const refused = await open(port);
    refused.socket.write(head(100_000, 'Expect: 100-continue\r\n'));
    await until('closed', () => refused.state.closed);
    expect(refused.state.text).toMatch(/^HTTP\/1\.1 413 /);
    expect(refused.state.text).not.toContain('100 Continue');
    const admitted = await open(port);
    admitted.socket.write(head(7, 'Expect: 100-continue\r\n'));
    await until('100 Continue', () => admitted.state.text.includes('100 Continue'));
    admitted.socket.write('{"a":1}');
    await until('the answer', () => admitted.state.text.includes('"got"'));
    expect(admitted.state.text).toMatch(/HTTP\/1\.1 200 /);
  });

  it('draining off (0): every refused unread body closes its connection', async () => {
    const port = await serve({ refusedBodyDrainBytes: 0 });
    const { socket, state } = await open(port);
    socket.write(head(100_000));
    await until('closed', () => state.closed);
    expect(state.text).toMatch(/^HTTP\/1\.1 413 /);
    expect(state.text.toLowerCase()).toContain('connection: close');
  });
});
