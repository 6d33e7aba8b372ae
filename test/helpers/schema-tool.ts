/**
 * Runs in its own process (one embedded engine per data dir): `schema-tool.ts <dataDir> apply <file>`
 * runs a file's statements (one per line ending in `;`); `schema-tool.ts <dataDir> dump` prints the
 * schema (every table's and view's create statement, by name) and the recorded migrations as JSON.
 */
import { readFileSync } from 'node:fs';
import { openStore } from '@weft/store';

const [dataDir, command, file] = process.argv.slice(2);
const store = openStore({ dataDir: dataDir! });
if (command === 'apply') {
  const statements = readFileSync(file!, 'utf8')
    .split('\n')
    .filter((l) => !l.startsWith('--'))
    .join('\n')
    .split(/;\n/)
    .map((s) => s.trim())
    .filter(Boolean);
  for (const query of statements) await store.client.command({ query });
} else if (command === 'dump') {
  const tables = await store.client.query({
    query: 'SELECT name, create_table_query FROM system.tables WHERE database = currentDatabase() ORDER BY name',
    format: 'JSONEachRow',
  });
  const migrations = await store.client.query({
    query: 'SELECT version FROM weft_migrations FINAL ORDER BY version',
    format: 'JSONEachRow',
  });
  const counts = await store.client.query({
    query:
      'SELECT (SELECT count() FROM calls_starts) AS starts, (SELECT count() FROM calls_ends) AS ends, (SELECT count() FROM llm_token_prices) AS prices',
    format: 'JSONEachRow',
  });
  console.log(
    JSON.stringify({
      tables: Object.fromEntries(
        (await tables.json<{ name: string; create_table_query: string }>()).map((t) => [t.name, t.create_table_query]),
      ),
      migrations: (await migrations.json<{ version: number }>()).map((m) => Number(m.version)),
      counts: (await counts.json<Record<string, string>>())[0],
    }),
  );
} else throw new Error(`unknown command ${command}`);
await store.close();
process.exit(0);
