import type { FastifyInstance } from 'fastify';
import { bundleUi, type UiAssets } from './bundle';

/** Paths the UI is served on (the front proxy sends them to the query service). */
export const UI_PATHS = { index: '/', assets: '/ui/' } as const;

/**
 * The web UI: `/` is the page, `/ui/<file>` its script chunks and stylesheet (names with a content
 * hash), bundled on first request and kept in memory. The page talks only to the HTTP API, with the key the user signs in with.
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
    return page(a.entry, a.stylesheet);
  });
  app.get(`${UI_PATHS.assets}:file`, async (req, reply) => {
    const a = await get();
    const file = (req.params as { file: string }).file;
    const asset = a.files.get(file);
    if (asset)
      return reply.header('content-type', asset.type).header('cache-control', 'public, max-age=31536000, immutable').send(asset.body);
    return reply.code(404).send({ status: 404, reason: `no such UI asset: ${file}` });
  });
}

function page(entry: string, stylesheet: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>weft</title>
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
