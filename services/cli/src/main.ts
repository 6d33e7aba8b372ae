import { runAdmin, KeyStore } from '@weft/auth';
import { isApiError, loadConfig } from '@weft/core';
import { backupDataDir, latestMigration, migrate, openStore, restoreDataDir, type Store } from '@weft/store';
import {
  parseCommand,
  UsageError,
  type BackupCommand,
  type Command,
  type McpCommand,
  type MigrateCommand,
  type ReadCommand,
  type ServerWorkCommand,
} from './commands';
import { runMcp } from './mcp';
import { runRead } from './read';
import { runServerWork } from './server-work';

/** Through a running server's admin endpoints. */
async function viaHttp(cmd: Command): Promise<unknown> {
  if (!cmd.apiKey) throw new UsageError('--url needs an admin key: --api-key <key> or WEFT_API_KEY');
  const res = await fetch(new URL(cmd.path, cmd.url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${cmd.apiKey}` },
    body: JSON.stringify(cmd.body),
  });
  const body = (await res.json().catch(() => ({}))) as { reason?: string };
  if (!res.ok) throw new Error(`${res.status}: ${body.reason ?? res.statusText}`);
  return body;
}

/** Straight on the store (no server running on an embedded data dir, or a ClickHouse server). */
async function viaStore(cmd: Command | MigrateCommand): Promise<unknown> {
  const config = loadConfig();
  let store: Store | undefined;
  try {
    store = openStore({
      url: config.CLICKHOUSE_URL,
      username: config.CLICKHOUSE_USER,
      password: config.CLICKHOUSE_PASSWORD,
      database: config.CLICKHOUSE_DATABASE,
      dataDir: config.WEFT_DATA_DIR,
      cluster: config.CLICKHOUSE_CLUSTER,
    });
    const applied = await migrate(store, undefined, { cluster: config.CLICKHOUSE_CLUSTER });
    if (cmd.kind === 'migrate') return { applied, schema_version: latestMigration() };
    return await runAdmin(new KeyStore(store), cmd.path, cmd.body);
  } catch (e) {
    if (!isApiError(e) && !config.CLICKHOUSE_URL) {
      throw new Error(
        `${(e as Error).message}\n(is a weft server running on ${config.WEFT_DATA_DIR}? The embedded store allows one process; ` +
          `use --url http://localhost:${config.PORT} --api-key <admin key> instead, or set WEFT_API_KEY to an admin key)`,
      );
    }
    throw e;
  } finally {
    await store?.close();
  }
}

/**
 * Straight on the store; when a weft server holds the embedded data dir and an admin key is given
 * (--api-key or WEFT_API_KEY), through that server instead, found where this configuration says it
 * listens (`http://127.0.0.1:<PORT>`): the sign-in page's `keys create` works while the server runs.
 */
async function viaStoreOrServer(cmd: Command | MigrateCommand): Promise<unknown> {
  try {
    return await viaStore(cmd);
  } catch (e) {
    if (cmd.kind !== 'admin' || !cmd.apiKey || !/is in use by another weft process/.test((e as Error).message)) throw e;
    const url = `http://127.0.0.1:${loadConfig().PORT}`;
    process.stderr.write(`The data dir is in use by a running server: going through it (${url}).\n`);
    return viaHttp({ ...cmd, url });
  }
}

/** `weft backup|restore`: the embedded store's data directory, never a ClickHouse server (its own BACKUP: docs/operations.md). */
async function backupOrRestore(cmd: BackupCommand): Promise<unknown> {
  const config = loadConfig();
  if (config.CLICKHOUSE_URL)
    throw new UsageError(
      `weft ${cmd.kind} is for the all-in-one's embedded store; CLICKHOUSE_URL is set: use ClickHouse's own BACKUP/RESTORE (docs/operations.md "Backups")`,
    );
  const dataDir = cmd.dataDir ?? config.WEFT_DATA_DIR;
  return cmd.kind === 'backup' ? backupDataDir(dataDir, cmd.dir) : restoreDataDir(cmd.dir, dataDir);
}

type AnyCommand = Command | MigrateCommand | ReadCommand | ServerWorkCommand | BackupCommand | McpCommand;

const isRead = (cmd: AnyCommand): cmd is ReadCommand =>
  cmd.kind === 'export' ||
  cmd.kind === 'analytics' ||
  cmd.kind === 'retention' ||
  cmd.kind === 'settings' ||
  cmd.kind === 'dead-letters' ||
  cmd.kind === 'delete';

const isBackup = (cmd: AnyCommand): cmd is BackupCommand => cmd.kind === 'backup' || cmd.kind === 'restore';

async function main(): Promise<number> {
  let cmd: AnyCommand;
  try {
    cmd = parseCommand(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n`);
    return 2;
  }
  try {
    if (cmd.kind === 'mcp') {
      // Runs until the client closes stdin.
      await runMcp(cmd);
      return 0;
    }
    if (isRead(cmd)) {
      await runRead(cmd);
      return 0;
    }
    if (isBackup(cmd)) {
      process.stdout.write(JSON.stringify(await backupOrRestore(cmd), null, 2) + '\n');
      return 0;
    }
    if (cmd.kind === 'server-work') {
      process.stdout.write(JSON.stringify(await runServerWork(cmd), null, 2) + '\n');
      return Number(process.exitCode ?? 0);
    }
    const result = cmd.kind === 'admin' && cmd.url ? await viaHttp(cmd) : await viaStoreOrServer(cmd);
    process.stdout.write(JSON.stringify(result, null, 2) + '\n');
    if (cmd.kind === 'admin' && cmd.path === '/admin/keys/create')
      process.stderr.write('The key above is shown only this once; store it now.\n');
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`${e.message}\n`);
      return 2;
    }
    process.stderr.write(`weft: ${isApiError(e) ? `${e.status}: ${e.reason}` : (e as Error).message}\n`);
    return 1;
  }
}

main().then((code) => process.exit(code));
