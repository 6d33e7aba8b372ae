import { mkdir, readFile, writeFile } from 'node:fs/promises';

export interface UiAssets {
  /** File name → content: the entry script, its lazily loaded chunks, the stylesheet. */
  files: Map<string, { body: string; type: string }>;
  entry: string;
  stylesheet: string;
}

/** dist/ui/manifest.json: which file is the entry, which the stylesheet, each file's content type. */
interface Manifest {
  entry: string;
  stylesheet: string;
  types: Record<string, string>;
}

const MANIFEST = 'manifest.json';

/** Writes the bundled UI where the compiled server reads it (`npm run build`). */
export async function writeUiAssets(assets: UiAssets, dir: URL): Promise<void> {
  await mkdir(dir, { recursive: true });
  const types: Record<string, string> = {};
  for (const [name, f] of assets.files) {
    types[name] = f.type;
    await writeFile(new URL(name, dir), f.body);
  }
  const manifest: Manifest = { entry: assets.entry, stylesheet: assets.stylesheet, types };
  await writeFile(new URL(MANIFEST, dir), `${JSON.stringify(manifest, null, 2)}\n`);
}

/** The UI as `npm run build` wrote it, read once into memory as the bundler's output would be. */
export async function readUiAssets(dir: URL): Promise<UiAssets> {
  const manifest = JSON.parse(await readFile(new URL(MANIFEST, dir), 'utf8')) as Manifest;
  const files = new Map<string, { body: string; type: string }>();
  for (const [name, type] of Object.entries(manifest.types)) files.set(name, { body: await readFile(new URL(name, dir), 'utf8'), type });
  return { files, entry: manifest.entry, stylesheet: manifest.stylesheet };
}
