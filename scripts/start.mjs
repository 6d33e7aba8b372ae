// `npm start`: the all-in-one server, compiled (dist/all-in-one.mjs). When dist/ is not a build of
// the sources as they are (a fresh clone, a pull, an edit), it is built first, in a process of its
// own (esbuild and tsx stay out of the server's memory): `npm ci && npm start` stays two commands.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DIST_DIR, REPO_ROOT, buildIsFresh } from '@weft/core/build-stamp';

if (!buildIsFresh()) {
  // The build's lines go to stderr: stdout is the server's JSON log.
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'scripts', 'build.ts')], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 2, 2],
  });
  if (r.status !== 0) {
    console.error(`weft: the build failed (npm run build; it needs the dev dependencies: npm ci)${r.error ? `: ${r.error.message}` : ''}`);
    process.exit(1);
  }
}
await import(pathToFileURL(join(DIST_DIR, 'all-in-one.mjs')).href);
