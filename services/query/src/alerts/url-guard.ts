import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * Which addresses a channel's URL may reach (docs/alerts.md, "Channel URLs"): anyone who may write
 * a project can make weft POST to a URL, so by default weft refuses URLs whose host is, or
 * resolves to, an address that is not on the public Internet — loopback, link-local (the cloud
 * metadata service at 169.254.169.254), private networks, shared address space, multicast,
 * reserved — unless WEFT_ALERTS_ALLOW_PRIVATE_URLS allows it. The check is made when a channel
 * is created (a 400 naming `url`) and again on the address each delivery connects to (DNS can
 * change between the two): `guardedLookup` is the lookup of the delivery's connection itself.
 */

/** Ranges that are not the public Internet (IANA special-purpose registries), with what they are. */
const SPECIAL_V4: [string, number, string][] = [
  ['0.0.0.0', 8, 'this network'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'shared address space'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'IETF protocol assignments'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];
const SPECIAL_V6: [string, number, string][] = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['64:ff9b:1::', 48, 'local-use translation'],
  ['100::', 64, 'discard-only'],
  ['2001:db8::', 32, 'documentation'],
  ['fc00::', 7, 'unique local (private)'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'site-local'],
  ['ff00::', 8, 'multicast'],
];

const special = SPECIAL_V4.map(([net, prefix, what]) => ({ list: block(net, prefix, 'ipv4'), what })).concat(
  SPECIAL_V6.map(([net, prefix, what]) => ({ list: block(net, prefix, 'ipv6'), what })),
);

function block(net: string, prefix: number, family: 'ipv4' | 'ipv6'): BlockList {
  const b = new BlockList();
  b.addSubnet(net, prefix, family);
  return b;
}

/**
 * What kind of non-public address `ip` is (`loopback`, `private`, `link-local`…), or null when
 * it is a public one. An IPv6 address that carries an IPv4 one (`::ffff:a.b.c.d`, NAT64
 * `64:ff9b::a.b.c.d`, `::a.b.c.d`) is judged by the IPv4 address it carries.
 */
export function privateKindOf(ip: string): string | null {
  const family = isIP(ip);
  if (family === 0) return 'not an IP address';
  if (family === 6) {
    const v4 = embeddedV4(ip);
    if (v4) return privateKindOf(v4);
  }
  const type = family === 4 ? 'ipv4' : 'ipv6';
  return special.find((s) => s.list.check(ip, type))?.what ?? null;
}

/** The IPv4 address an IPv6 one carries in its last 32 bits when its prefix says so (mapped, NAT64, compatible). */
function embeddedV4(ip: string): string | null {
  const words = expandV6(ip);
  if (!words) return null;
  const head = words.slice(0, 6);
  const mapped = head.slice(0, 5).every((w) => w === 0) && head[5] === 0xffff;
  const compatible = head.every((w) => w === 0) && (words[6] !== 0 || words[7]! > 1);
  const nat64 = words[0] === 0x64 && words[1] === 0xff9b && head.slice(2).every((w) => w === 0);
  if (!mapped && !compatible && !nat64) return null;
  return [words[6]! >> 8, words[6]! & 0xff, words[7]! >> 8, words[7]! & 0xff].join('.');
}

/** An IPv6 address as its eight 16-bit words (a dotted IPv4 tail read as two words). */
function expandV6(ip: string): number[] | null {
  let s = ip.split('%')[0]!;
  const tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s);
  if (tail) {
    const [a, b, c, d] = tail.slice(1).map(Number) as [number, number, number, number];
    s = `${s.slice(0, tail.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [left, right] = s.split('::') as [string, string | undefined];
  const l = left ? left.split(':') : [];
  const r = right ? right.split(':') : [];
  const fill = right === undefined ? [] : new Array<string>(8 - l.length - r.length).fill('0');
  const words = [...l, ...fill, ...r].map((w) => parseInt(w, 16));
  return words.length === 8 && words.every((w) => w >= 0 && w <= 0xffff) ? words : null;
}

/**
 * WEFT_ALERTS_ALLOW_PRIVATE_URLS read: empty (the default, or `false`, `0`) allows no non-public
 * address; `true` (or `1`) allows every address; otherwise a comma-separated list of what is allowed: addresses and
 * CIDR ranges (`10.1.2.3`, `10.0.0.0/8`, `fd00::/8`), and host names (`hooks.internal`: that
 * host whatever it resolves to).
 */
export interface UrlPolicy {
  allowAll: boolean;
  ranges: BlockList;
  hosts: Set<string>;
  /** The setting as given (for messages). */
  setting: string;
}

export function urlPolicyOf(setting: string | undefined): UrlPolicy {
  const s = (setting ?? '').trim();
  const policy: UrlPolicy = { allowAll: false, ranges: new BlockList(), hosts: new Set(), setting: s };
  if (s === '' || s === 'false' || s === '0') return policy;
  if (s === 'true' || s === '1') return { ...policy, allowAll: true };
  for (const item of s
    .split(',')
    .map((x) => x.trim().toLowerCase())
    .filter(Boolean)) {
    const cidr = /^([^/]+)\/(\d{1,3})$/.exec(item);
    const addr = cidr ? cidr[1]! : item.replace(/^\[(.*)\]$/, '$1');
    const family = isIP(addr);
    if (family === 0) {
      if (cidr) throw new Error(`WEFT_ALERTS_ALLOW_PRIVATE_URLS: '${item}' is not an address range`);
      policy.hosts.add(item);
      continue;
    }
    const type = family === 4 ? 'ipv4' : 'ipv6';
    const prefix = cidr ? Number(cidr[2]) : family === 4 ? 32 : 128;
    if (prefix > (family === 4 ? 32 : 128)) throw new Error(`WEFT_ALERTS_ALLOW_PRIVATE_URLS: '${item}' has too long a prefix`);
    policy.ranges.addSubnet(addr, prefix, type);
  }
  return policy;
}

/** Why `address` (of `host`) may not be reached, or null when it may. */
export function refusedAddress(policy: UrlPolicy, host: string, address: string): string | null {
  if (policy.allowAll || policy.hosts.has(host.toLowerCase())) return null;
  const kind = privateKindOf(address);
  if (kind === null) return null;
  const family = isIP(address);
  if (family && policy.ranges.check(address, family === 4 ? 'ipv4' : 'ipv6')) return null;
  const of = host === address ? '' : ` (the address of ${host})`;
  return `${address}${of} is ${kind === 'not an IP address' ? 'not an IP address' : `a ${kind} address`}, not reachable by alert channels unless WEFT_ALERTS_ALLOW_PRIVATE_URLS allows it`;
}

/** The host of a URL as a connection sees it (brackets of an IPv6 literal removed). */
export const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

/**
 * Whether a channel's URL may be used now: every address its host resolves to is public (or
 * allowed). Resolves to the reason it may not, or null.
 */
export async function checkChannelUrl(policy: UrlPolicy, raw: string): Promise<string | null> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not a URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http:// or https:// URL';
  if (url.username || url.password) return 'may not carry credentials (use the channel secret)';
  const host = hostOf(url);
  if (policy.allowAll || policy.hosts.has(host.toLowerCase())) return null;
  if (isIP(host)) return refusedAddress(policy, host, host);
  let addresses: LookupAddress[];
  try {
    addresses = await new Promise<LookupAddress[]>((resolve, reject) =>
      dnsLookup(host, { all: true, verbatim: true }, (err, a) => (err ? reject(err) : resolve(a))),
    );
  } catch (err) {
    return `host ${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? String(err)})`;
  }
  for (const a of addresses) {
    const why = refusedAddress(policy, host, a.address);
    if (why) return why;
  }
  return null;
}

/** The error a guarded connection fails with (its code names it in the delivery log). */
export class RefusedAddressError extends Error {
  readonly code = 'EWEFTPRIVATEADDRESS';
}

/**
 * A `lookup` for node:http(s) requests that refuses, at connection time, a host resolving to an
 * address the policy does not allow: what is checked is the address connected to.
 */
export function guardedLookup(policy: UrlPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as LookupAddress[];
      for (const a of list) {
        const why = refusedAddress(policy, hostname, a.address);
        if (why) return callback(new RefusedAddressError(why), '', 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  };
}
