import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { ensureDebianBinary } from './debian-package';
import { REPO_ROOT } from './paths';

/** Screenshots of the browser tests (gitignored). */
export const ARTIFACTS_DIR = join(REPO_ROOT, 'test-artifacts');

/** Debian's `chromium`, installed with apt-get when missing; WEFT_CHROMIUM names another binary. */
export function ensureChromium(): string {
  return ensureDebianBinary({
    pkg: 'chromium',
    paths: ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'],
    envVar: 'WEFT_CHROMIUM',
    installTimeoutMs: 900_000,
  });
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
