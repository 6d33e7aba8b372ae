/**
 * Where `npm run build` (scripts/build.ts) writes the compiled mains and the UI's assets: `dist/`
 * at the repository's root. In the build every module keeps its source file's import.meta.url,
 * so this names the same folder compiled or not.
 */
export const DIST_URL = new URL('../../../dist/', import.meta.url);

declare global {
  /**
   * `true` in the compiled server (the build defines it, and drops the branches it rules out:
   * no esbuild, no tsx); undeclared when run from the TypeScript sources (tsx, vitest). Test it
   * with `typeof WEFT_COMPILED !== 'undefined'`.
   */
  const WEFT_COMPILED: true | undefined;
}
