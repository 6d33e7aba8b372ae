import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './kafka-broker';
import { ensureDebianBinary } from './debian-package';
import { REPO_ROOT } from './paths';

/** The distributed mode's front proxy, as shipped (docker-compose.yml mounts the same file). */
export const NGINX_CONF = join(REPO_ROOT, 'deploy', 'nginx', 'nginx.conf');

/** Debian's `nginx`, installed with apt-get when missing; WEFT_NGINX names another binary. */
export function ensureNginx(): string {
  return ensureDebianBinary({ pkg: 'nginx', paths: ['/usr/sbin/nginx', '/usr/bin/nginx'], envVar: 'WEFT_NGINX' });
}

/** One proxied request, from the access log: which upstream (host:port) answered it, or `-` for nginx itself. */
export interface ProxiedRequest {
  method: string;
  uri: string;
  status: number;
  upstream: string;
}

export interface FrontProxy {
  url: string;
  port: number;
  /** The OTLP/gRPC server block's port. */
  grpcPort: number;
  /** The config file nginx runs (the shipped one, addresses substituted). */
  confPath: string;
  /** Every request nginx has logged so far. */
  requests(): ProxiedRequest[];
  stop(): Promise<void>;
}

// Tab-separated: nothing in a method, a status or an address has a tab, and nginx escapes one in a URI.
const LOG_FORMAT = "log_format weft_test '$request_method\\t$request_uri\\t$status\\t$upstream_addr';";

/**
 * The shipped config with this machine's addresses: each `server <name>:<port>;` of an upstream
 * block becomes the addresses `upstreams[<name>]` gives (a name the map lacks is an error, so a new
 * upstream cannot go unnoticed), the listeners move to free loopback ports, the access log goes
 * under `dir` and the temp files (request bodies past nginx's buffer) under `tempDir`. Nothing else
 * changes.
 */
export function frontProxyConfig(
  conf: string,
  upstreams: Record<string, string[]>,
  ports: { http: number; grpc: number },
  dir: string,
  tempDir = dir,
): string {
  const used = new Set<string>();
  let out = conf.replace(/upstream\s+([\w-]+)\s*\{([^}]*)\}/g, (_block, name: string, body: string) => {
    const addrs = upstreams[name];
    if (!addrs?.length) throw new Error(`nginx.conf has an upstream "${name}" the test does not know how to start`);
    used.add(name);
    const rest = body.replace(/\s*server\s+[^;]+;/g, '');
    return `upstream ${name} {${addrs.map((a) => ` server ${a};`).join('')}${rest}}`;
  });
  const unused = Object.keys(upstreams).filter((n) => !used.has(n));
  if (unused.length) throw new Error(`nginx.conf has no upstream ${unused.join(', ')}`);
  let listens = 0;
  out = out.replace(/listen\s+(\d+)([^;]*);/g, (_m, port: string, opts: string) => {
    listens++;
    if (port === '80') return `listen 127.0.0.1:${ports.http}${opts};`;
    if (port === '4317') return `listen 127.0.0.1:${ports.grpc}${opts};`;
    throw new Error(`nginx.conf listens on ${port}, which the test does not map`);
  });
  if (listens !== 2) throw new Error(`expected nginx.conf to listen on 80 and 4317, found ${listens} listen directives`);
  const local = [
    LOG_FORMAT,
    `access_log ${join(dir, 'access.log')} weft_test;`,
    ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `${t}_temp_path ${join(tempDir, `${t}_temp`)};`),
  ];
  if (!/^http\s*\{/m.test(out)) throw new Error('nginx.conf has no http block');
  return out.replace(/^http\s*\{/m, `http {\n  ${local.join('\n  ')}`);
}

/**
 * Runs the shipped nginx.conf in front of the given upstream addresses (`name` → `host:port`
 * list), in the foreground, on free loopback ports, with its pid, logs and temp files under `dir`.
 * `conf` replaces the shipped file's text (a test proving that a broken config is caught).
 */
export async function startFrontProxy(
  upstreams: Record<string, string[]>,
  dir: string,
  conf = readFileSync(NGINX_CONF, 'utf8'),
): Promise<FrontProxy> {
  const nginx = ensureNginx();
  mkdirSync(dir, { recursive: true });
  // Run as root, nginx's workers are `nobody`: they write request bodies past nginx's buffer to
  // its temp dirs, which must be reachable by them — not under a checkout in a private (0700)
  // directory, as a CI's fresh clone may be (every such body was a 500 there).
  const tempDir = mkdtempSync(join(tmpdir(), 'weft-nginx-'));
  chmodSync(tempDir, 0o755);
  // Two different ports: each is free when asked for, not held, so a second ask may get the first
  // again (both servers on one port: nginx warns of conflicting names, and HTTP/1 probes fail).
  const http = await freePort();
  let grpc = await freePort();
  while (grpc === http) grpc = await freePort();
  const ports = { http, grpc };
  const confPath = join(dir, 'nginx.conf');
  writeFileSync(confPath, frontProxyConfig(conf, upstreams, ports, dir, tempDir));
  // Debian's nginx also reads its mime.types etc. relative to the prefix; the shipped file includes none.
  const args = ['-p', dir, '-c', confPath, '-g', `daemon off; pid ${join(dir, 'nginx.pid')}; error_log ${join(dir, 'error.log')} warn;`];
  const test = spawnSync(nginx, [...args, '-t'], { encoding: 'utf8' });
  if (test.status !== 0) throw new Error(`nginx -t refused the config:\n${test.stderr}`);
  const proc: ChildProcess = spawn(nginx, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  proc.stderr!.on('data', (d) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${ports.http}`;
  // Listening once a request gets any answer.
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`nginx exited with ${proc.exitCode}:\n${stderr}\n${readIfExists(join(dir, 'error.log'))}`);
    const ok = await fetch(`${url}/__nginx_probe`).then(
      () => true,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`nginx did not listen within 30 s:\n${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    port: ports.http,
    grpcPort: ports.grpc,
    confPath,
    requests: () =>
      readIfExists(join(dir, 'access.log'))
        .split('\n')
        .filter(Boolean)
        .map((line) => {
          const [method, uri, status, upstream] = line.split('\t') as [string, string, string, string];
          return { method, uri, status: Number(status), upstream };
        }),
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        // SIGQUIT: graceful (workers finish their requests); SIGKILL if it lingers.
        proc.kill('SIGQUIT');
        const force = setTimeout(() => proc.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(force);
      }
      rmSync(tempDir, { recursive: true, force: true });
    },
  };
}

function readIfExists(path: string): string {
  return existsSync(path) ? readFileSync(path, 'utf8') : '';
}
