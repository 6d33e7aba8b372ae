import type { FastifyInstance, FastifyReply } from 'fastify';
import { DIST_URL } from '@weft/core';
import { readUiAssets, type UiAssets } from './prebuilt';

/** Paths the UI is served on (the front proxy sends them to the query service). */
export const UI_PATHS = { index: '/', assets: '/ui/' } as const;

/**
 * The pages the Weave SDK links to (weave/trace/urls.py: `<base>/<entity>/<project>/weave[/…]`,
 * `<base>/<entity>/<project>/r/call/<id>`): each is the UI's page, whose router shows the view
 * (app/sdk-links.ts).
 */
export const SDK_LINK_PATHS = ['/:entity/:project/weave', '/:entity/:project/weave/*', '/:entity/:project/r/call/:id'] as const;

/**
 * The web UI: `/` is the page, `/ui/<file>` its script chunks and stylesheet (names with a content
 * hash), loaded on first request and kept in memory. The page talks only to the HTTP API, with the key the user signs in with.
 */
export async function uiRoutes(app: FastifyInstance): Promise<void> {
  let assets: Promise<UiAssets> | null = null;
  const get = () => {
    assets ??= loadUi().catch((e) => {
      assets = null; // a failed load is retried on the next request
      throw e;
    });
    return assets;
  };
  const index = async (_req: unknown, reply: FastifyReply) => {
    const a = await get();
    reply.header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-cache');
    return page(a.entry, a.stylesheet);
  };
  app.get(UI_PATHS.index, index);
  for (const path of SDK_LINK_PATHS) app.get(path, index);
  app.get(`${UI_PATHS.assets}:file`, async (req, reply) => {
    const a = await get();
    const file = (req.params as { file: string }).file;
    const asset = a.files.get(file);
    if (asset)
      return reply.header('content-type', asset.type).header('cache-control', 'public, max-age=31536000, immutable').send(asset.body);
    return reply.code(404).send({ status: 404, reason: `no such UI asset: ${file}` });
  });
}

/**
 * The compiled server reads what `npm run build` bundled (dist/ui/); run from the sources, the
 * server bundles them itself (esbuild, which the compiled server neither loads nor ships).
 */
function loadUi(): Promise<UiAssets> {
  // A conditional expression, which the build folds (an `if` would leave the import in the bundle).
  return typeof WEFT_COMPILED !== 'undefined' ? readUiAssets(new URL('ui/', DIST_URL)) : import('./bundle').then((b) => b.bundleUi());
}

/** The woven-threads mark, inline (no request, nothing for the proxy to route). */
const FAVICON = `data:image/svg+xml,${encodeURIComponent(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#2f5bea"/>' +
    '<path d="M7 10h18M7 16h18M7 22h18" stroke="#fff" stroke-width="2.5" stroke-linecap="round"/>' +
    '<path d="M12 7v18M20 7v18" stroke="#b9c9ff" stroke-width="2.5" stroke-linecap="round"/></svg>',
)}`;

function page(entry: string, stylesheet: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>weft</title>
<meta name="color-scheme" content="light dark">
<link rel="icon" href="${FAVICON}">
<link rel="stylesheet" href="/ui/${stylesheet}">
</head>
<body>
<div id="app"><p class="boot">Loading weft…</p></div>
<noscript>The weft UI needs JavaScript.</noscript>
<script type="module" src="/ui/${entry}"></script>
</body>
</html>
`;
}
