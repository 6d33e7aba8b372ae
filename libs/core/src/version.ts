import { readFileSync } from 'node:fs';

/** The one version of weft: the root package.json's, reported by /health, /server_info and OpenAPI. */
export const VERSION: string = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string })
  .version;
