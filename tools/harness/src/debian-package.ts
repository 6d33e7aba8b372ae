import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export interface DebianBinary {
  /** The Debian package that ships it (`chromium`, `nginx`). */
  pkg: string;
  /** Where the package puts the binary, in order of preference. */
  paths: string[];
  /** An environment variable naming another binary to use instead. */
  envVar: string;
  /** How long apt-get may take to install it (ms). */
  installTimeoutMs?: number;
}

function find(bin: DebianBinary): string | null {
  const named = process.env[bin.envVar];
  if (named) return named;
  return bin.paths.find((p) => existsSync(p)) ?? null;
}

/**
 * A binary the tests need from Debian, installed with apt-get when missing: CI machines start
 * bare and the tests run as root there. Elsewhere, say what to install (or which variable to set).
 */
export function ensureDebianBinary(bin: DebianBinary): string {
  const found = find(bin);
  if (found) return found;
  if (process.getuid?.() !== 0) {
    throw new Error(`${bin.pkg} is missing: install Debian's \`${bin.pkg}\` package (apt-get install -y ${bin.pkg}) or set ${bin.envVar}`);
  }
  execFileSync('apt-get', ['update'], { stdio: 'ignore', timeout: 300_000 });
  const r = spawnSync('apt-get', ['install', '-y', '--no-install-recommends', bin.pkg], {
    stdio: 'pipe',
    timeout: bin.installTimeoutMs ?? 600_000,
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  if (r.status !== 0) throw new Error(`apt-get install ${bin.pkg} failed: ${r.stderr?.toString().slice(-2000)}`);
  const installed = find(bin);
  if (!installed) throw new Error(`${bin.pkg} was installed but not found`);
  return installed;
}
