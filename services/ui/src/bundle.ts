import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/** The browser sources (TSX), next to this folder. */
export const APP_DIR = fileURLToPath(new URL('../app/', import.meta.url));

export interface UiAssets {
  js: string;
  css: string;
  /** Content hash of js+css: the asset URLs carry it, so browsers may cache them for good. */
  version: string;
}

/**
 * Bundles the UI from its sources with esbuild (Preact, Chart.js: all from node_modules, no CDN),
 * in memory. About a second, once per process: there is no build step before `npm start`.
 */
export async function bundleUi(opts: { minify?: boolean } = {}): Promise<UiAssets> {
  const result = await build({
    entryPoints: [`${APP_DIR}main.tsx`],
    bundle: true,
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
  });
  const js = result.outputFiles.find((f) => f.path.endsWith('.js'))!.text;
  const css = await readFile(`${APP_DIR}style.css`, 'utf8');
  const { createHash } = await import('node:crypto');
  const version = createHash('sha256').update(js).update(css).digest('hex').slice(0, 12);
  return { js, css, version };
}
