// Whether dist/ was built from the sources as they are: `npm start` builds first when not
// (scripts/start.mjs), `npm run build` records it (scripts/build.ts), the CLI runs dist/cli.mjs
// only when so (services/cli/bin/weft.mjs; plain JavaScript, as all three run before any build).
// A hash of the contents, not of mtimes, so a checkout, a copy or an edit undone is judged by
// what the files say (~20 ms).
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../..', import.meta.url));
export const DIST_DIR = join(REPO_ROOT, 'dist');
const STAMP = join(DIST_DIR, 'build-stamp.json');

/** What the build reads: every package's sources (this file among them) and manifest, the UI's sources, the lockfile, the build itself. */
function inputs() {
  const files = ['package.json', 'package-lock.json', 'scripts/build.ts'].map((f) => join(REPO_ROOT, f));
  for (const floor of ['libs', 'services']) {
    for (const pkg of readdirSync(join(REPO_ROOT, floor), { withFileTypes: true })) {
      if (!pkg.isDirectory()) continue;
      const dir = join(REPO_ROOT, floor, pkg.name);
      files.push(join(dir, 'package.json'));
      for (const sub of ['src', 'app']) walk(join(dir, sub), files);
    }
  }
  return files.sort();
}

function walk(dir, out) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return; // a package without this folder
  }
  for (const e of entries) {
    const path = join(dir, e.name);
    if (e.isDirectory()) walk(path, out);
    else if (e.isFile()) out.push(path);
  }
}

/** The hash of the build's inputs: their paths and contents. */
export function sourcesHash() {
  const h = createHash('sha256');
  for (const f of inputs()) {
    let content;
    try {
      content = readFileSync(f);
    } catch {
      continue; // e.g. a package.json-less folder
    }
    h.update(relative(REPO_ROOT, f)).update('\0').update(content).update('\0');
  }
  return h.digest('hex');
}

/** True when dist/ holds a build of the sources as they are now. */
export function buildIsFresh() {
  try {
    return JSON.parse(readFileSync(STAMP, 'utf8')).sources === sourcesHash();
  } catch {
    return false; // no build yet
  }
}

/** Records that dist/ was built from these sources (the build's last step). */
export function stampOf(sources) {
  return { path: STAMP, body: `${JSON.stringify({ sources, builtAt: new Date().toISOString() })}\n` };
}
