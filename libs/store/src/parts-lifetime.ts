import type { Store } from './connection';

/**
 * The embedded engine removes a merged part's files at once (its default `old_parts_lifetime` is
 * 0). With statements on several connections at once (the lanes), a read then sometimes found a
 * part of its snapshot gone ("No such file or directory … data.cmrk4"). Outdated parts are kept
 * a minute, as a ClickHouse server keeps them for eight: a read of them always finds their files.
 */
export async function keepOutdatedParts(store: Store, seconds = 60): Promise<void> {
  if (store.mode !== 'embedded') return;
  const tables = await store.rows<{ name: string }>(
    `SELECT name FROM system.tables
     WHERE database = currentDatabase() AND engine LIKE '%MergeTree' AND NOT match(create_table_query, 'old_parts_lifetime = ')`,
    undefined,
    { name: 'store.parts-lifetime.tables' },
  );
  for (const { name } of tables)
    await store.command(`ALTER TABLE \`${name}\` MODIFY SETTING old_parts_lifetime = ${seconds}`, undefined, {
      name: 'store.parts-lifetime.set',
    });
}
