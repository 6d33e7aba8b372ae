import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { REPO_ROOT } from './paths';

/** Screenshots of the browser tests (gitignored). */
export const ARTIFACTS_DIR = join(REPO_ROOT, 'test-artifacts');

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

function findChromium(): string | null {
  if (process.env.WEFT_CHROMIUM) return process.env.WEFT_CHROMIUM;
  return CANDIDATES.find((p) => existsSync(p)) ?? null;
}

/**
 * Debian's `chromium`, installed with apt-get when missing (CI machines start bare; the tests
 * run as root there). WEFT_CHROMIUM names another binary.
 */
export function ensureChromium(): string {
  const found = findChromium();
  if (found) return found;
  const root = process.getuid?.() === 0;
  if (!root) throw new Error("chromium is missing: install Debian's `chromium` package (apt-get install -y chromium) or set WEFT_CHROMIUM");
  execFileSync('apt-get', ['update'], { stdio: 'ignore', timeout: 300_000 });
  const r = spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'chromium'], {
    stdio: 'pipe',
    timeout: 900_000,
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  if (r.status !== 0) throw new Error(`apt-get install chromium failed: ${r.stderr?.toString().slice(-2000)}`);
  const installed = findChromium();
  if (!installed) throw new Error('chromium was installed but not found');
  return installed;
}

/** A real headless Chromium, driven by playwright-core over CDP. */
export async function launchBrowser(): Promise<Browser> {
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  return chromium.launch({
    executablePath: ensureChromium(),
    headless: true,
    // Root in CI containers: Chromium's sandbox needs user namespaces it may not have.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
  });
}
