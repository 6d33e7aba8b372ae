import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { configSchema, loadConfig } from '@weft/core';
import { serverEntries } from '../scripts/build';
import { REPO_ROOT } from './helpers/paths';

// No Docker engine here: the cluster deployment is checked as data, like docker-compose.yml
// (test/compose.test.ts): its files agree with each other and with weft's configuration.
const DIR = join(REPO_ROOT, 'deploy', 'cluster');
interface ComposeService {
  image?: string;
  build?: unknown;
  hostname?: string;
  command?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: unknown;
  volumes?: string[];
  ports?: string[];
  deploy?: { replicas?: number };
  networks?: Record<string, { aliases?: string[] }>;
}
const compose = parse(readFileSync(join(DIR, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, ComposeService>;
  volumes: Record<string, unknown>;
};
const services = compose.services;
const named = (re: RegExp) =>
  Object.keys(services)
    .filter((n) => re.test(n))
    .sort();
const weftServices = Object.entries(services).filter(([, s]) => s.build !== undefined);

const xml = (file: string) => {
  const text = readFileSync(join(DIR, file), 'utf8');
  expect(XMLValidator.validate(text), file).toBe(true);
  return new XMLParser({
    ignoreAttributes: false,
    isArray: (_name, jpath) =>
      /(remote_servers\.\w+\.shard|\.shard\.replica|zookeeper\.node|raft_configuration\.server)$/.test(String(jpath)),
  }).parse(text).clickhouse;
};
const clickhouseXml = xml('clickhouse.xml');
const keeperXml = xml('keeper.xml');
/** A mounted file `./x:/path` must exist next to the compose file. */
const mountSource = (volume: string) => volume.split(':')[0]!;

describe('deploy/cluster/docker-compose.yml', () => {
  it('runs three Kafka brokers as one KRaft quorum, topics replicated 3 with min.insync.replicas 2', () => {
    const brokers = named(/^kafka-\d$/);
    expect(brokers).toEqual(['kafka-1', 'kafka-2', 'kafka-3']);
    const voters = brokers.map((b) => `${services[b]!.environment!.KAFKA_NODE_ID}@${b}:9093`).join(',');
    for (const b of brokers) {
      const env = services[b]!.environment!;
      expect(services[b]!.image).toMatch(/^apache\/kafka:/);
      expect(env.KAFKA_CONTROLLER_QUORUM_VOTERS, b).toBe(voters);
      expect(env.KAFKA_ADVERTISED_LISTENERS, b).toBe(`PLAINTEXT://${b}:9092`);
      expect(env.KAFKA_MIN_INSYNC_REPLICAS, b).toBe('2');
      expect(env.KAFKA_DEFAULT_REPLICATION_FACTOR, b).toBe('3');
      expect(env.KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR, b).toBe('3');
      expect(services[b]!.volumes, b).toContain(`${b}-data:/var/lib/kafka/data`);
    }
    expect(new Set(brokers.map((b) => services[b]!.environment!.KAFKA_NODE_ID)).size).toBe(3);
  });

  it('runs ClickHouse as 2 shards × 2 replicas, each server placed by its macros where remote_servers says', () => {
    const servers = named(/^clickhouse-/);
    expect(servers).toHaveLength(4);
    const cluster = clickhouseXml.remote_servers.weft;
    expect(cluster.shard).toHaveLength(2);
    const placed = new Map<string, string>(); // host → shard number (1-based)
    cluster.shard.forEach((shard: { internal_replication: boolean; replica: { host: string; port: number }[] }, i: number) => {
      // Replicated tables copy a part themselves: a Distributed insert writes one replica only.
      expect(shard.internal_replication).toBe(true);
      expect(shard.replica).toHaveLength(2);
      for (const r of shard.replica) placed.set(r.host, String(i + 1));
    });
    expect([...placed.keys()].sort()).toEqual(servers);
    expect(clickhouseXml.macros.shard['@_from_env']).toBe('CLICKHOUSE_SHARD');
    expect(clickhouseXml.macros.replica['@_from_env']).toBe('CLICKHOUSE_REPLICA');
    const replicas = new Set<string>();
    for (const name of servers) {
      const s = services[name]!;
      expect(s.image, name).toMatch(/^clickhouse\/clickhouse-server:/);
      expect(s.hostname, name).toBe(name);
      expect(s.environment!.CLICKHOUSE_SHARD, name).toBe(placed.get(name));
      expect(s.environment!.CLICKHOUSE_HOSTNAME, name).toBe(name);
      replicas.add(`${s.environment!.CLICKHOUSE_SHARD}/${s.environment!.CLICKHOUSE_REPLICA}`);
      expect(s.volumes, name).toContain('./clickhouse.xml:/etc/clickhouse-server/config.d/weft.xml:ro');
      expect(s.volumes, name).toContain(`${name}-data:/var/lib/clickhouse`);
      expect(s.networks!.default!.aliases, name).toContain('clickhouse');
      for (const k of named(/^keeper-/)) expect(s.depends_on![k], `${name} → ${k}`).toEqual({ condition: 'service_healthy' });
    }
    expect(replicas.size).toBe(4); // every (shard, replica) pair distinct: distinct Keeper paths
  });

  it('coordinates through a three-node Keeper that the servers and the Keeper config agree on', () => {
    const keepers = named(/^keeper-/);
    expect(keepers).toEqual(['keeper-1', 'keeper-2', 'keeper-3']);
    const raft = keeperXml.keeper_server.raft_configuration.server as { id: number; hostname: string; port: number }[];
    expect(raft.map((r) => r.hostname).sort()).toEqual(keepers);
    expect(keeperXml.keeper_server.server_id['@_from_env']).toBe('KEEPER_SERVER_ID');
    for (const k of keepers) {
      expect(services[k]!.image, k).toMatch(/^clickhouse\/clickhouse-keeper:/);
      const id = Number(services[k]!.environment!.KEEPER_SERVER_ID);
      expect(raft.find((r) => r.id === id)?.hostname, k).toBe(k);
      expect(services[k]!.volumes, k).toContain('./keeper.xml:/etc/clickhouse-keeper/keeper_config.xml:ro');
    }
    const port = keeperXml.keeper_server.tcp_port;
    expect((clickhouseXml.zookeeper.node as { host: string; port: number }[]).map((n) => `${n.host}:${n.port}`).sort()).toEqual(
      keepers.map((k) => `${k}:${port}`),
    );
    expect(clickhouseXml.distributed_ddl.path).toBeTruthy();
  });

  it('runs 2 gateways, N writers, 2 query services and inference, all configured for the cluster', () => {
    expect(weftServices.map(([n]) => n).sort()).toEqual(['gateway', 'inference', 'query', 'writer']);
    expect(services.gateway!.deploy!.replicas).toBe(2);
    expect(services.query!.deploy!.replicas).toBe(2);
    expect(services.writer!.deploy!.replicas).toBeGreaterThanOrEqual(2);
    const known = new Set(Object.keys(configSchema.shape));
    const brokers = named(/^kafka-\d$/)
      .map((b) => `${b}:9092`)
      .join(',');
    const clusterName = Object.keys(clickhouseXml.remote_servers)[0];
    for (const [name, s] of weftServices) {
      expect(s.command).toEqual(['node', `dist/${name}.mjs`]);
      const main = serverEntries[name as keyof typeof serverEntries];
      expect(main).toBe(`services/${name}/src/main.ts`);
      expect(existsSync(join(REPO_ROOT, main))).toBe(true);
      expect(s.build).toBe('../..');
      const env = s.environment ?? {};
      expect(
        Object.keys(env).filter((k) => !known.has(k)),
        name,
      ).toEqual([]);
      const config = loadConfig(env);
      expect(config.CLICKHOUSE_CLUSTER, name).toBe(clusterName);
      expect(config.CLICKHOUSE_URL, name).toBe('http://clickhouse:8123');
      expect(config.KAFKA_BROKERS, name).toBe(brokers);
      expect(config.KAFKA_REPLICATION_FACTOR, name).toBe(3);
      // The servers connect to each other as the user the services use.
      expect(services['clickhouse-s1r1']!.environment!.CLICKHOUSE_USER).toBe(config.CLICKHOUSE_USER);
      for (const dep of [...named(/^kafka-\d$/), ...named(/^clickhouse-/)]) {
        expect(s.depends_on![dep], `${name} → ${dep}`).toEqual({ condition: 'service_healthy' });
      }
    }
  });

  it('puts the same front proxy in front, with an upstream for every service it routes to', () => {
    const proxy = services.proxy!;
    expect(proxy.ports).toEqual(['6345:80']);
    const mount = proxy.volumes!.find((v) => v.endsWith(':/etc/nginx/nginx.conf:ro'))!;
    expect(mount).toBe('../nginx/nginx.conf:/etc/nginx/nginx.conf:ro');
    const conf = readFileSync(join(DIR, mountSource(mount)), 'utf8');
    const upstreams = [...conf.matchAll(/upstream (\w+) \{ server ([\w-]+):6345;/g)];
    expect(upstreams.length).toBeGreaterThanOrEqual(3);
    for (const [, name, host] of upstreams) expect(services[host!], `upstream ${name}`).toBeDefined();
    expect(Object.keys(proxy.depends_on!).sort()).toEqual(['gateway', 'inference', 'query', 'writer']);
  });

  it('gives every service a health check, every mounted file exists, every named volume is declared', () => {
    for (const [name, s] of Object.entries(services)) {
      expect(s.healthcheck, name).toBeDefined();
      for (const v of s.volumes ?? []) {
        const source = mountSource(v);
        if (source.startsWith('.')) expect(existsSync(join(DIR, source)), `${name}: ${v}`).toBe(true);
        else expect(compose.volumes, `${name}: ${v}`).toHaveProperty(source);
      }
    }
  });
});
