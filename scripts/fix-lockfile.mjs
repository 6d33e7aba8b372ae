// npm leaves chdb's other-platform engine packages out of package-lock.json when the registry
// it used does not list them, and `npm ci` then rejects the lock as out of sync. This declares
// them as optional, platform-restricted entries (npm skips those on other platforms).
// Run after any `npm install` that rewrote package-lock.json: `node scripts/fix-lockfile.mjs`.
import { readFileSync, writeFileSync } from 'node:fs';

const path = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(path, 'utf8'));
const pk = lock.packages;
const present = pk['node_modules/@chdb/lib-linux-x64-gnu'];
if (!present) throw new Error('chdb engine package not in the lock; run npm install first');
const platforms = {
  'lib-darwin-arm64': { os: ['darwin'], cpu: ['arm64'] },
  'lib-darwin-x64': { os: ['darwin'], cpu: ['x64'] },
  'lib-linux-arm64-gnu': { os: ['linux'], cpu: ['arm64'], libc: ['glibc'] },
};
let added = 0;
for (const [name, plat] of Object.entries(platforms)) {
  const key = `node_modules/@chdb/${name}`;
  if (pk[key]) continue;
  pk[key] = { version: present.version, license: 'Apache-2.0', optional: true, ...plat };
  added++;
}
const sorted = Object.fromEntries(Object.entries(pk).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : a > b ? 1 : 0)));
lock.packages = sorted;
writeFileSync(path, JSON.stringify(lock, null, 2) + '\n');
console.log(`fix-lockfile: ${added} platform entries added`);
