import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send } from '../src/alerts/notify';
import { checkChannelUrl, privateKindOf, urlPolicyOf } from '../src/alerts/url-guard';

/**
 * Alert channels' URLs (server-side request forgery): addresses off the public Internet are
 * refused unless WEFT_ALERTS_ALLOW_PRIVATE_URLS allows them — when a channel is made and on the
 * address each delivery connects to (a real receiver on 127.0.0.1 and `localhost`).
 */
describe('which addresses are private', () => {
  it('loopback, private, link-local (the metadata service), shared, multicast, reserved; IPv6 too, and IPv4 carried in IPv6', () => {
    for (const [ip, kind] of [
      ['127.0.0.1', 'loopback'],
      ['10.2.3.4', 'private'],
      ['172.20.0.1', 'private'],
      ['192.168.1.1', 'private'],
      ['169.254.169.254', 'link-local'],
      ['100.64.0.1', 'shared address space'],
      ['0.0.0.0', 'this network'],
      ['224.0.0.1', 'multicast'],
      ['255.255.255.255', 'reserved'],
      ['::1', 'loopback'],
      ['::', 'unspecified'],
      ['fd12:3456::1', 'unique local (private)'],
      ['fe80::1', 'link-local'],
      ['::ffff:127.0.0.1', 'loopback'],
      ['::ffff:a9fe:a9fe', 'link-local'],
      ['64:ff9b::10.0.0.1', 'private'],
    ])
      expect(privateKindOf(ip!), ip).toBe(kind);
    for (const ip of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])
      expect(privateKindOf(ip), ip).toBeNull();
  });
});

describe('the policy', () => {
  it('refuses private hosts by default, names why; an allow-list of ranges and host names, or true, lets them through', async () => {
    const none = urlPolicyOf('');
    expect(await checkChannelUrl(none, 'http://127.0.0.1:9/x')).toMatch(
      /^127\.0\.0\.1 is a loopback address.*WEFT_ALERTS_ALLOW_PRIVATE_URLS/,
    );
    expect(await checkChannelUrl(none, 'http://[::1]:9/x')).toMatch(/loopback/);
    expect(await checkChannelUrl(none, 'http://169.254.169.254/latest/meta-data')).toMatch(/link-local/);
    expect(await checkChannelUrl(none, 'http://localhost:9/x')).toMatch(/the address of localhost\) is a loopback address/);
    expect(await checkChannelUrl(none, 'http://user:pw@8.8.8.8/x')).toMatch(/credentials/);
    expect(await checkChannelUrl(none, 'http://8.8.8.8/x')).toBeNull();
    expect(await checkChannelUrl(none, 'http://no-such-host.invalid/x')).toMatch(/does not resolve/);

    expect(await checkChannelUrl(urlPolicyOf('true'), 'http://127.0.0.1:9/x')).toBeNull();
    expect(await checkChannelUrl(urlPolicyOf('1'), 'http://169.254.169.254/x')).toBeNull();
    expect(await checkChannelUrl(urlPolicyOf('false'), 'http://127.0.0.1:9/x')).toMatch(/loopback/);
    const some = urlPolicyOf('10.0.0.0/8, hooks.internal, ::1');
    expect(await checkChannelUrl(some, 'http://10.9.9.9/x')).toBeNull();
    expect(await checkChannelUrl(some, 'http://[::1]/x')).toBeNull();
    expect(await checkChannelUrl(some, 'http://hooks.internal/x')).toBeNull(); // by name, whatever it resolves to
    expect(await checkChannelUrl(some, 'http://192.168.0.1/x')).toMatch(/private/);
    expect(await checkChannelUrl(some, 'http://127.0.0.1/x')).toMatch(/loopback/);
    expect(() => urlPolicyOf('10.0.0.0/99')).toThrow(/too long a prefix/);
    expect(() => urlPolicyOf('hooks.internal/8')).toThrow(/not an address range/);
  });
});

describe('delivery', () => {
  let receiver: Server;
  let hits = 0;
  let port = 0;
  beforeAll(async () => {
    receiver = createServer((req, res) => {
      hits++;
      req.resume();
      req.on('end', () => res.end('ok'));
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    port = (receiver.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())));

  it('connects only to an allowed address: a literal, or a name whose address is checked as the connection resolves it', async () => {
    const channel = (host: string) => ({ url: `http://${host}:${port}/hook`, format: 'json' as const, secret: '' });
    for (const host of ['127.0.0.1', 'localhost']) {
      const refused = await send(channel(host), 'e1', '{}', urlPolicyOf(''));
      expect(refused, host).toMatchObject({ ok: false, status_code: null, refused: true, error: expect.stringMatching(/loopback/) });
    }
    expect(hits).toBe(0);
    for (const host of ['127.0.0.1', 'localhost']) {
      expect(await send(channel(host), 'e2', '{}', urlPolicyOf('127.0.0.0/8,::1')), host).toEqual({
        ok: true,
        status_code: 200,
        error: null,
      });
    }
    expect(hits).toBe(2);
    // A receiver that is down: an ordinary failure, tried again later (not a refusal).
    const down = await send({ url: 'http://127.0.0.1:9/x', format: 'json', secret: '' }, 'e3', '{}', urlPolicyOf('true'));
    expect(down).toMatchObject({ ok: false, status_code: null, error: 'ECONNREFUSED' });
    expect(down.refused).toBeUndefined();
  });
});
