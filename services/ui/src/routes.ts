import type { FastifyInstance } from 'fastify';
import { bundleUi, type UiAssets } from './bundle';

/** Paths the UI is served on (the front proxy sends them to the query service). */
export const UI_PATHS = { index: '/', assets: '/ui/' } as const;

/**
 * The web UI: `/` is the page, `/ui/app.<version>.js|css` its assets, bundled on first request
 * and kept in memory. The page talks only to the HTTP API, with the key the user signs in with.
 */
export async function uiRoutes(app: FastifyInstance): Promise<void> {
  let assets: Promise<UiAssets> | null = null;
  const get = () => {
    assets ??= bundleUi().catch((e) => {
      assets = null; // a failed build is retried on the next request
      throw e;
    });
    return assets;
  };
  app.get(UI_PATHS.index, async (_req, reply) => {
    const a = await get();
    reply.header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-cache');
    return page(a.version);
  });
  app.get(`${UI_PATHS.assets}:file`, async (req, reply) => {
    const a = await get();
    const file = (req.params as { file: string }).file;
    const immutable = 'public, max-age=31536000, immutable';
    if (file === `app.${a.version}.js`) return reply.header('content-type', 'text/javascript; charset=utf-8').header('cache-control', immutable).send(a.js);
    if (file === `app.${a.version}.css`) return reply.header('content-type', 'text/css; charset=utf-8').header('cache-control', immutable).send(a.css);
    return reply.code(404).send({ status: 404, reason: `no such UI asset: ${file}` });
  });
}

function page(version: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>weft</title>
<link rel="stylesheet" href="/ui/app.${version}.css">
</head>
<body>
<div id="app"><p class="boot">Loading weft…</p></div>
<noscript>The weft UI needs JavaScript.</noscript>
<script type="module" src="/ui/app.${version}.js"></script>
</body>
</html>
`;
}
