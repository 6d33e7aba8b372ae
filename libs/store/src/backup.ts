import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { VERSION } from '@weft/core';
import { claimDataDir } from './data-dir-lock';

/**
 * Backups of an all-in-one data directory (`weft backup` / `weft restore`): the embedded engine's
 * own BACKUP and RESTORE of the database (every table and view, with their parts, as ClickHouse
 * writes a backup), plus the local ingest log beside it (parts acknowledged and not yet stored,
 * the dead letters and what became of them). Taken with no server on the directory: the data dir
 * lock is taken for the whole copy, so a server cannot start meanwhile, and one running makes
 * the backup refuse (one engine per directory; nothing moves under the copy).
 */

/** The backup's description, written last: a directory without it is not a finished backup. */
export const BACKUP_MANIFEST = 'weft-backup.json';
/** Where in a backup the engine's backup is, and the ingest log's copy. */
const ENGINE_DIR = 'clickhouse';
const INGEST_LOG_DIR = 'ingest-log';
/** The embedded engine's data under WEFT_DATA_DIR (connection.ts), and its one database. */
const DATA_ENGINE_DIR = 'clickhouse';
const DATABASE = 'default';

export interface BackupManifest {
  weft_version: string;
  created_at: string;
  database: string;
  /** Rows per table when the backup was taken (restore checks them). */
  tables: Record<string, number>;
  /** The newest migration applied to the backed-up store. */
  schema_version: number;
  ingest_log: boolean;
}

interface ChdbSession {
  queryAsync(sql: string, opts?: { format?: string }): Promise<{ text(): string }>;
  close(): void;
}

/** An engine session on `dataDir`'s store that may write and read backups under `backups`. */
function openEngine(dataDir: string, backups: string): ChdbSession {
  const engineDir = join(dataDir, DATA_ENGINE_DIR);
  mkdirSync(engineDir, { recursive: true });
  // chdb is published as CommonJS; its Session takes the engine's arguments (backups.allowed_path is server configuration).
  const require = createRequire(import.meta.url);
  const { Session } = require('chdb') as { Session: new (path: string, opts: { connectionArgs: string[] }) => ChdbSession };
  return new Session(engineDir, { connectionArgs: [`--backups.allowed_path=${backups}`] });
}

const quote = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

async function rowCounts(engine: ChdbSession): Promise<Record<string, number>> {
  const text = (
    await engine.queryAsync(
      `SELECT name, total_rows FROM system.tables WHERE database = ${quote(DATABASE)} AND total_rows IS NOT NULL ORDER BY name`,
      { format: 'TSV' },
    )
  ).text();
  const counts: Record<string, number> = {};
  for (const line of text.split('\n')) {
    if (!line) continue;
    const [name, rows] = line.split('\t');
    counts[name!] = Number(rows);
  }
  return counts;
}

async function schemaVersion(engine: ChdbSession): Promise<number> {
  const text = (await engine.queryAsync(`SELECT max(version) FROM ${DATABASE}.weft_migrations`, { format: 'TSV' })).text().trim();
  return Number(text) || 0;
}

const isEmptyDir = (dir: string) => !existsSync(dir) || readdirSync(dir).length === 0;

/** Backs up `dataDir` (an all-in-one WEFT_DATA_DIR, no server running on it) into `target`, a new or empty directory. */
export async function backupDataDir(dataDir: string, target: string): Promise<BackupManifest> {
  const from = resolve(dataDir);
  const to = resolve(target);
  if (!existsSync(join(from, DATA_ENGINE_DIR))) throw new Error(`${from} holds no weft store (no ${DATA_ENGINE_DIR}/ in it)`);
  if (!isEmptyDir(to)) throw new Error(`${to} is not empty: back up into a new directory`);
  const release = claimDataDir(from);
  try {
    mkdirSync(to, { recursive: true });
    const engine = openEngine(from, to);
    let manifest: BackupManifest;
    try {
      await engine.queryAsync(`BACKUP DATABASE ${DATABASE} TO File(${quote(join(to, ENGINE_DIR))})`, { format: 'TSV' });
      manifest = {
        weft_version: VERSION,
        created_at: new Date().toISOString(),
        database: DATABASE,
        tables: await rowCounts(engine),
        schema_version: await schemaVersion(engine),
        ingest_log: existsSync(join(from, INGEST_LOG_DIR)),
      };
    } finally {
      engine.close();
    }
    if (manifest.ingest_log) cpSync(join(from, INGEST_LOG_DIR), join(to, INGEST_LOG_DIR), { recursive: true });
    writeFileSync(join(to, BACKUP_MANIFEST), JSON.stringify(manifest, null, 2) + '\n');
    return manifest;
  } finally {
    release();
  }
}

/**
 * Restores a backup (`source`, made by backupDataDir) into `dataDir`, which must hold no store
 * yet (a new directory): the engine's RESTORE, the ingest log copied back, the row counts checked
 * against the backup's. A server started on `dataDir` then serves what was backed up, and stores
 * what its ingest log had acknowledged.
 */
export async function restoreDataDir(source: string, dataDir: string): Promise<BackupManifest & { restored_tables: number }> {
  const from = resolve(source);
  const to = resolve(dataDir);
  const manifestFile = join(from, BACKUP_MANIFEST);
  if (!existsSync(manifestFile)) throw new Error(`${from} is not a finished weft backup (no ${BACKUP_MANIFEST})`);
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as BackupManifest;
  if (!isEmptyDir(join(to, DATA_ENGINE_DIR)) || !isEmptyDir(join(to, INGEST_LOG_DIR)))
    throw new Error(`${to} already holds a store: restore into a new data directory (move this one away first)`);
  mkdirSync(to, { recursive: true });
  const release = claimDataDir(to);
  try {
    const engine = openEngine(to, from);
    try {
      await engine.queryAsync(`RESTORE DATABASE ${manifest.database} FROM File(${quote(join(from, ENGINE_DIR))})`, { format: 'TSV' });
      const counts = await rowCounts(engine);
      const differ = Object.entries(manifest.tables).filter(([table, rows]) => counts[table] !== rows);
      if (differ.length > 0)
        throw new Error(
          `restored tables differ from the backup: ${differ.map(([t, rows]) => `${t} ${counts[t] ?? 'missing'} rows, backed up ${rows}`).join('; ')}`,
        );
    } finally {
      engine.close();
    }
    if (manifest.ingest_log) cpSync(join(from, INGEST_LOG_DIR), join(to, INGEST_LOG_DIR), { recursive: true });
    return { ...manifest, restored_tables: Object.keys(manifest.tables).length };
  } finally {
    release();
  }
}
