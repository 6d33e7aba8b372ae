// `npm run build`: the server compiled to JavaScript (dist/<main>.mjs) and the UI's assets
// bundled (dist/ui/), so production runs neither tsx nor esbuild. `npm start` runs it first when
// dist/ is not a build of the sources as they are (scripts/start.mjs); docs/development.md.
import { randomUUID } from 'node:crypto';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { bundleUi } from '../services/ui/src/bundle';
import { writeUiAssets } from '../services/ui/src/prebuilt';
import { DIST_DIR, REPO_ROOT, sourcesHash, stampOf } from '@weft/core/build-stamp';

/** dist/<name>.mjs ← its source: each service's main (what docker-compose.yml and the Helm chart run), and the ingest worker threads' entry. */
export const serverEntries = {
  'all-in-one': 'services/all-in-one/src/main.ts',
  gateway: 'services/gateway/src/main.ts',
  writer: 'services/writer/src/main.ts',
  query: 'services/query/src/main.ts',
  inference: 'services/inference/src/main.ts',
  cli: 'services/cli/src/main.ts',
  'ingest-worker': 'libs/ingest/src/ingest-worker.ts',
} as const;

/**
 * Bare imports other than our own packages stay imports, resolved in node_modules at run time as
 * from the sources: chDB is a native module, and pino, piscina and gRPC load files by path.
 */
const dependenciesExternal: Plugin = {
  name: 'dependencies-external',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => (args.path.startsWith('@weft/') ? undefined : { path: args.path, external: true }));
  },
};

/**
 * Each module keeps its source file's import.meta.url (as a URL relative to the bundle's), so
 * what it reads beside itself (migrations, emoji names, package.json) and the packages it
 * resolves with createRequire are found as when it runs from the sources.
 */
const sourceImportMetaUrl = (outdir: string): Plugin => ({
  name: 'source-import-meta-url',
  setup(b) {
    b.onLoad({ filter: /\.tsx?$/ }, async (args) => {
      if (args.path.includes(`${sep}node_modules${sep}`)) return undefined;
      const text = await readFile(args.path, 'utf8');
      if (!text.includes('import.meta.url')) return undefined;
      const fromBundle = relative(outdir, args.path).split(sep).join('/');
      return { contents: text.replaceAll('import.meta.url', `new URL(${JSON.stringify(fromBundle)}, import.meta.url).href`), loader: 'ts' };
    });
  },
});

/** Builds into a scratch folder beside dist/, then swaps it in: a server running from dist/ never sees half a build. */
export async function buildAll(): Promise<void> {
  const sources = sourcesHash();
  const out = join(REPO_ROOT, `dist.${randomUUID().slice(0, 8)}.tmp`);
  try {
    await build({
      absWorkingDir: REPO_ROOT,
      entryPoints: serverEntries,
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node20.19',
      outdir: out,
      outExtension: { '.js': '.mjs' },
      // Chunks beside the mains: every output file sits at the same depth (sourceImportMetaUrl).
      chunkNames: 'chunk-[hash]',
      // Class and function names stay what the sources say (errors and logs print them).
      keepNames: true,
      sourcemap: 'linked',
      define: { WEFT_COMPILED: 'true' },
      plugins: [dependenciesExternal, sourceImportMetaUrl(DIST_DIR)],
      logLevel: 'warning',
    });
    await writeUiAssets(await bundleUi(), pathToFileURL(join(out, 'ui') + sep));
    const stamp = stampOf(sources);
    await writeFile(join(out, relative(DIST_DIR, stamp.path)), stamp.body);
    const old = `${out}.old`;
    await rename(DIST_DIR, old).catch(() => undefined);
    await rename(out, DIST_DIR);
    await rm(old, { recursive: true, force: true });
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const t0 = performance.now();
  await buildAll();
  console.log(`built dist/ in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
