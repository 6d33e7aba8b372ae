import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, stop } from 'esbuild';
import type { UiAssets } from './prebuilt';

/** The browser sources (TSX), next to this folder. */
export const APP_DIR = fileURLToPath(new URL('../app/', import.meta.url));

/**
 * Bundles the UI from its sources with esbuild (Preact, Chart.js: all from node_modules, no CDN),
 * in memory. About a second: `npm run build` writes its output to dist/ui/ for the compiled
server; run from the sources, the server bundles once, on the first request. Views
 * that need a heavy library (the charts) load it as a separate chunk, so the first page does not
 * wait for it. Every file name carries a content hash: browsers may cache them for good.
 */
export async function bundleUi(opts: { minify?: boolean } = {}): Promise<UiAssets> {
  const result = await build({
    entryPoints: [`${APP_DIR}main.tsx`],
    bundle: true,
    splitting: true,
    write: false,
    format: 'esm',
    target: 'es2022',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: opts.minify ?? true,
    sourcemap: false,
    legalComments: 'none',
    logLevel: 'silent',
    outdir: '/ui',
    entryNames: 'app-[hash]',
    chunkNames: 'chunk-[hash]',
  });
  // The bundle is built once: esbuild's service process is not kept alongside the server.
  await stop();
  const files = new Map<string, { body: string; type: string }>();
  let entry = '';
  for (const f of result.outputFiles) {
    const name = basename(f.path);
    files.set(name, { body: f.text, type: 'text/javascript; charset=utf-8' });
    if (name.startsWith('app-')) entry = name;
  }
  const css = await readFile(`${APP_DIR}style.css`, 'utf8');
  const stylesheet = `style-${createHash('sha256').update(css).digest('hex').slice(0, 10)}.css`;
  files.set(stylesheet, { body: css, type: 'text/css; charset=utf-8' });
  return { files, entry, stylesheet };
}
