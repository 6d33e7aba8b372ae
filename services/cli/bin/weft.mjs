#!/usr/bin/env node
// `weft ...`: the compiled CLI (dist/cli.mjs) when dist/ is a build of the sources as they are
// (always so in the image), else the TypeScript CLI through tsx: a command never waits on a build.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildIsFresh, DIST_DIR, REPO_ROOT } from '@weft/core/build-stamp';

if (buildIsFresh()) {
  await import(pathToFileURL(join(DIST_DIR, 'cli.mjs')).href);
} else {
  const main = join(REPO_ROOT, 'services', 'cli', 'src', 'main.ts');
  const r = spawnSync(process.execPath, ['--import', 'tsx', main, ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}
